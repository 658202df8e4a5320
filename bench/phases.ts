import { errorMessage } from './deadline';

/**
 * The benchmark's phases. Each measures and prints its own figures; one
 * that fails prints `phase <name> failed: <reason>` instead, and the run
 * goes on to the next, so that a slow or broken part costs no other figure.
 * Phases may nest (a section that starts a server, the measurements in it):
 * a failure is reported by the innermost phase it happened in.
 */
export class Phases {
  readonly failures: { name: string; reason: string }[] = [];

  constructor(readonly print: (line: string) => void = (line) => console.log(line)) {}

  /** Runs one phase; resolves with whether it succeeded (never rejects). */
  async run(name: string, measure: () => Promise<void>): Promise<boolean> {
    try {
      await measure();
      return true;
    } catch (error) {
      const reason = errorMessage(error).split('\n')[0]!;
      this.failures.push({ name, reason });
      this.print(`  phase ${name} failed: ${reason}`);
      return false;
    }
  }

  /** The run's last line: how many phases failed, and which. */
  summary(): string {
    if (this.failures.length === 0) return '\nevery phase finished';
    return `\n${this.failures.length} phase(s) failed: ${this.failures.map((f) => f.name).join('; ')}`;
  }

  /** The exit code of the run: non-zero if any phase failed. */
  get exitCode(): number {
    return this.failures.length === 0 ? 0 : 1;
  }
}
