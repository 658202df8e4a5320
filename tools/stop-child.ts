import type { ChildProcess } from 'node:child_process';

/** Sends `signal` to a child by its own PID and waits for it to exit; nothing when it already has. */
export async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid!, signal);
  await exited;
}
