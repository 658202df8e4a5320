/**
 * Lets one waiter sleep until something changes: `wait()` resolves at the
 * next `notify()`. A notify with nobody waiting is dropped, so a waiter
 * checks its condition before it waits, in a loop.
 */
export class Wakeup {
  private resume: (() => void) | undefined;

  wait(): Promise<void> {
    return new Promise((resolve) => {
      this.resume = resolve;
    });
  }

  notify(): void {
    const resume = this.resume;
    this.resume = undefined;
    resume?.();
  }
}
