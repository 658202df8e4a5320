import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A line a process printed: parsed JSON, or `{ msg: text, unparsed: true }` for a stray line. */
export type JsonLine = Record<string, unknown>;

/**
 * A process the tests start (a worker, the server's start command) whose
 * stdout is JSON lines. Tests wait on what it prints instead of on time:
 * every wait is bounded and, when it fails, says what the process printed.
 * The process is stopped by its own PID.
 */
export class JsonLinesProcess {
  readonly lines: JsonLine[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly output: Promise<void>;
  private stderr = '';
  private readonly listeners = new Set<() => void>();
  private readonly child: ChildProcess;
  private hasClosed = false;

  constructor(
    readonly name: string,
    command: string,
    args: readonly string[],
    options: SpawnOptions = {},
  ) {
    this.child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    // 'close' comes after the output streams ended: everything the process printed is in by then.
    this.exited = new Promise((resolve) =>
      this.child.once('close', (code, signal) => {
        this.hasClosed = true;
        resolve({ code, signal });
      }),
    );
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    const reader = createInterface({ input: this.child.stdout! });
    this.output = new Promise((resolve) => reader.once('close', resolve));
    reader.on('line', (text) => {
      this.lines.push(parse(text));
      this.notify();
    });
    this.child.once('close', () => this.notify());
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** What the process wrote to stderr so far. */
  get errorOutput(): string {
    return this.stderr;
  }

  get isRunning(): boolean {
    return !this.hasClosed;
  }

  /**
   * The first line that matches, printed already or to come; rejects when the
   * process exits first or `timeoutMs` passes.
   */
  waitFor(matches: (line: JsonLine) => boolean, what: string, timeoutMs = 10_000): Promise<JsonLine> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = this.lines.find(matches);
        if (found !== undefined) finish(() => resolve(found));
        else if (!this.isRunning)
          finish(() => reject(this.failure(`exited with ${this.child.exitCode ?? this.child.signalCode} before printing ${what}`)));
      };
      const timer = setTimeout(() => finish(() => reject(this.failure(`did not print ${what} within ${timeoutMs} ms`))), timeoutMs);
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
        settle();
      };
      this.listeners.add(check);
      check();
    });
  }

  count(matches: (line: JsonLine) => boolean): number {
    return this.lines.filter(matches).length;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) process.kill(this.pid, signal);
  }

  /** Resolves with the exit code once the process exits, bounded by `timeoutMs`. */
  async exitCode(timeoutMs = 10_000): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.failure(`did not exit within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return (await Promise.race([this.exited, timeout])).code;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends a signal and resolves with the exit code, bounded by `timeoutMs`. */
  async stop(signal: NodeJS.Signals, timeoutMs = 10_000): Promise<number | null> {
    this.signal(signal);
    return this.exitCode(timeoutMs);
  }

  /** Kills the process if it still runs (test cleanup). */
  async kill(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
  }

  private notify(): void {
    // A copy: listeners remove themselves as they run.
    for (const listener of Array.from(this.listeners)) listener();
  }

  private failure(what: string): Error {
    const printed = this.lines.map((line) => JSON.stringify(line)).join('\n');
    return new Error(`${this.name} ${what}.\nstdout:\n${printed}\nstderr:\n${this.stderr}`);
  }
}

function parse(text: string): JsonLine {
  try {
    return JSON.parse(text) as JsonLine;
  } catch {
    return { msg: text, unparsed: true };
  }
}
