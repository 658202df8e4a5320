import { join } from 'node:path';
import { projectRoot } from '../src/project-root';
import { JsonLinesProcess } from './json-lines-process';

/** A JSON log line of the server. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** Node's flags for the server, as `npm start` and the Docker image give them (README.md, "Memory and the collector"). */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=32'];

/** The server's entry point in the build of the checkout at `root` (this one's by default). */
export const serverEntry = (root: string = projectRoot()): string => join(root, 'dist', 'src', 'main.js');

/**
 * The real server (dist/src/main.js, what `npm start` runs) as a process of
 * its own on 127.0.0.1 and a free port; for the benchmark and the tests that
 * need separate processes. It is stopped by its own PID.
 */
export class ServerProcess extends JsonLinesProcess {
  private listeningOn = 0;

  /**
   * Starts the server and resolves once it logs that it listens. A server
   * that has not listened within `timeoutMs` is killed (by its PID) and the
   * start fails.
   */
  static async start(
    env: Record<string, string> = {},
    args: string[] = [],
    timeoutMs = 20_000,
    /** Sees the process as soon as it is spawned, before it listens. */
    onSpawn?: (server: ServerProcess) => void,
    /** The server to run: another build's (serverEntry) for the benchmark's comparisons. */
    entry: string = serverEntry(),
  ): Promise<ServerProcess> {
    const server = new ServerProcess(
      'the server',
      process.execPath,
      [...SERVER_NODE_FLAGS, entry, '--host', '127.0.0.1', '--port', '0', ...args],
      {
        env: { ...process.env, OJS_LOG_LEVEL: 'info', ...env },
      },
    );
    onSpawn?.(server);
    try {
      server.listeningOn = (await server.waitForLog((line) => line.msg === 'ojs server listening', 'that it listens', timeoutMs))[
        'port'
      ] as number;
    } catch (error) {
      await server.kill();
      throw error;
    }
    return server;
  }

  get port(): number {
    return this.listeningOn;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get logs(): LogLine[] {
    return this.lines as LogLine[];
  }

  /** The first log line (already logged, or still to come) that matches; bounded by `timeoutMs`. */
  waitForLog(predicate: (line: LogLine) => boolean, description: string, timeoutMs = 10_000): Promise<LogLine> {
    return this.waitFor(
      (line) => typeof line['msg'] === 'string' && predicate(line as LogLine),
      description,
      timeoutMs,
    ) as Promise<LogLine>;
  }

  /** Sends a signal (SIGKILL simulates a crash) and resolves with the exit code. */
  override async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<number | null> {
    return super.stop(signal, timeoutMs);
  }
}
