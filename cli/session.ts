import type { Command } from 'commander';
import { connect, type Connection, type ConnectionOptions } from './connection';
import { Output } from './output';

/** The global flags every command sees (program.ts declares them). */
export interface GlobalOptions extends ConnectionOptions {
  json?: boolean;
}

/** What a command runs with: its clients, where it writes, the time, and a signal that Ctrl-C aborts (when it asks). */
export interface Session {
  readonly connection: Connection;
  readonly output: Output;
  readonly signal: AbortSignal;
  nowMs(): number;
}

/**
 * Runs `work` with a connection made from the command's global flags,
 * closing it afterwards however `work` ends. With `isInterruptible`, SIGINT
 * and SIGTERM abort `signal` instead of killing the process, so that a
 * follow or a wait can stop cleanly and say where it got to; the other
 * commands die of them as usual.
 */
export async function withSession(
  command: Command,
  work: (session: Session) => Promise<void>,
  { isInterruptible = false }: { isInterruptible?: boolean } = {},
): Promise<void> {
  const options = command.optsWithGlobals<GlobalOptions>();
  const connection = connect(options);
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  if (isInterruptible) {
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  try {
    await work({ connection, output: new Output(options.json === true), signal: abort.signal, nowMs: () => Date.now() });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    connection.close();
  }
}
