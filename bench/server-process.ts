import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** A server started as its own process on 127.0.0.1 and a free port. */
export interface ServerProcess {
  address: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts dist/src/main.js and resolves once it logs the port it listens on. */
export async function startServerProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [join(__dirname, '..', 'src', 'main.js'), '--host', '127.0.0.1', '--port', '0'], {
    env: { ...process.env, OJS_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before listening`)));
    lines.on('line', (line) => {
      const entry = JSON.parse(line) as { msg?: string; port?: number };
      if (entry.msg === 'ojs server listening' && entry.port !== undefined) resolve(entry.port);
    });
  });
  return {
    address: `127.0.0.1:${port}`,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
