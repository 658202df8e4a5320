import type { Clock } from '../../src/domain/clock';

/** A clock that only moves when a test moves it. */
export class ManualClock implements Clock {
  constructor(private current = Date.parse('2026-01-01T00:00:00.000Z')) {}

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}
