import type { RecordedFact } from '../../src/domain/event-facts';
import { Progress } from './waiting';

/** Facts a follower of a store's log was handed, and a way to wait for more. */
export function factFollower(timeoutMs?: number) {
  const got: RecordedFact[] = [];
  const progress = new Progress();
  return {
    got,
    listener: (facts: RecordedFact[]) => {
      got.push(...facts);
      progress.changed();
    },
    until: (count: number) =>
      progress.until(
        () => got.length >= count,
        () => `${count} facts (have ${got.length})`,
        timeoutMs,
      ),
  };
}
