import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/project-root';

/** The processes the tests started, stopped by their PIDs at the end if a failed test left them running. */
const started: ChildProcess[] = [];

/** Runs a Node script of the built benchmark with BENCH_SERVER_ROOT set: its exit code and output. */
function runWithServerRoot(serverRoot: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, BENCH_SERVER_ROOT: serverRoot },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('the benchmark with BENCH_SERVER_ROOT', () => {
  let otherCheckout: string;

  beforeAll(() => {
    // Another checkout with a build: this one's, reached through a directory of its own.
    otherCheckout = mkdtempSync(join(tmpdir(), 'ojs-other-build-'));
    symlinkSync(join(projectRoot(), 'dist'), join(otherCheckout, 'dist'));
  });

  afterAll(() => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL');
    rmSync(otherCheckout, { recursive: true, force: true });
  });

  it("runs that checkout's server", async () => {
    const servers = join(projectRoot(), 'dist', 'bench', 'servers.js');
    // The server's command line as /proc gives it, read while it runs; the server is stopped by its PID before the script ends.
    const script = `require(${JSON.stringify(servers)}).withServerProcess({}, async (server) => {
      console.log(JSON.stringify(require('node:fs').readFileSync('/proc/' + server.pid + '/cmdline', 'utf8').split('\\0')));
    }).then(() => process.exit(0), (error) => { console.error(error); process.exit(1); });`;
    const { code, stdout, stderr } = await runWithServerRoot(otherCheckout, ['-e', script]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(stdout) as string[]).toContain(join(otherCheckout, 'dist', 'src', 'main.js'));
  }, 30_000);

  it('fails at once, saying so, when that checkout has no built server', async () => {
    const unbuilt = join(otherCheckout, 'unbuilt');
    const { code, stderr } = await runWithServerRoot(unbuilt, [join(projectRoot(), 'dist', 'bench', 'run.js')]);
    expect(code).toBe(1);
    expect(stderr).toContain(`BENCH_SERVER_ROOT=${unbuilt}: no server at ${join(unbuilt, 'dist', 'src', 'main.js')}`);
  });
});
