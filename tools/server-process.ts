import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from '../src/project-root';

/** A JSON log line of the server. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/**
 * The real server (dist/src/main.js, what `npm start` runs) as a process of
 * its own on 127.0.0.1 and a free port; for the benchmark and the tests that
 * need separate processes. It is stopped by its own PID.
 */
export class ServerProcess {
  readonly logs: LogLine[] = [];
  private readonly exited: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Starts the server and resolves once it logs that it listens. */
  static async start(env: Record<string, string> = {}, args: string[] = []): Promise<ServerProcess> {
    const child = spawn(process.execPath, [join(projectRoot(), 'dist', 'src', 'main.js'), '--host', '127.0.0.1', '--port', '0', ...args], {
      env: { ...process.env, OJS_LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const logs: LogLine[] = [];
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const port = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`server exited with ${code} before listening: ${stderr}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const entry = JSON.parse(line) as LogLine;
        logs.push(entry);
        if (entry.msg === 'ojs server listening') resolve(entry['port'] as number);
      });
    });
    const server = new ServerProcess(child, port);
    server.logs.push(...logs);
    createInterface({ input: child.stdout! }).on('line', (line) => server.logs.push(JSON.parse(line) as LogLine));
    return server;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Sends a signal and resolves with the exit code. SIGKILL simulates a crash. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) process.kill(this.pid, signal);
    return this.exited;
  }
}
