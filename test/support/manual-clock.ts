import type { Clock } from '../../src/domain/clock';

/** A clock that only moves when a test moves it; its timers fire as it passes them. */
export class ManualClock implements Clock {
  private readonly timers = new Set<{ at: number; callback: () => void }>();

  constructor(private current = Date.parse('2026-01-01T00:00:00.000Z')) {}

  now(): number {
    return this.current;
  }

  at(at: number, callback: () => void): () => void {
    const timer = { at, callback };
    this.timers.add(timer);
    // Already due: fired soon, never from inside the caller (as a system timer would).
    if (at <= this.current) queueMicrotask(() => this.fireDue());
    return () => this.timers.delete(timer);
  }

  advance(ms: number): void {
    this.current += ms;
    this.fireDue();
  }

  /** Fires the timers due, earliest first. */
  private fireDue(): void {
    const due = [...this.timers].filter((timer) => timer.at <= this.current).toSorted((a, b) => a.at - b.at);
    for (const timer of due) {
      this.timers.delete(timer);
      timer.callback();
    }
  }
}
