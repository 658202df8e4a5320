import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { installPackedSdk, type InstalledSdk } from '../support/installed-sdk';
import { TestServer } from '../support/test-server';

const run = promisify(execFile);

/** A worker of the installed package: plain JavaScript, as a user without TypeScript writes it. */
const WORKER = `
const { Worker } = require('ojs-sdk');
const worker = new Worker({ queues: ['installed'], concurrency: 2 });
worker.handle('installed.add', async ([a, b], ctx) => ({ sum: a + b, attempt: ctx.attempt, state: ctx.job.state }));
worker.run().then((code) => process.exit(code));
`;

/** A producer of the installed package: enqueues one job, waits for its result, prints both. */
const PRODUCER = `
const { Producer } = require('ojs-sdk');
(async () => {
  const producer = new Producer();
  const job = await producer.enqueue({ type: 'installed.add', queue: 'installed', args: [2, 3] });
  const result = await producer.result(job, { timeoutMs: 15000 });
  console.log(JSON.stringify({ id: job.id, state: job.state, result }));
  producer.close();
})().catch((error) => { console.error(error); process.exit(1); });
`;

describe('the SDK as an installed package', () => {
  let server: TestServer;
  let installed: InstalledSdk;

  beforeAll(async () => {
    server = await TestServer.start();
    installed = await installPackedSdk();
    writeFileSync(join(installed.dir, 'worker.js'), WORKER);
    writeFileSync(join(installed.dir, 'producer.js'), PRODUCER);
  }, 120_000);
  afterAll(async () => {
    installed?.remove();
    await server?.stop();
  });

  it('installs from its npm pack tarball with its types, and nothing of the repository', () => {
    const manifestText = readFileSync(join(installed.dir, 'node_modules', 'ojs-sdk', 'package.json'), 'utf8');
    const manifest = JSON.parse(manifestText) as { exports: Record<string, unknown> };
    expect(manifest.exports['.']).toEqual({ types: './dist/src/index.d.ts', default: './dist/src/index.js' });
    expect(require.resolve('ojs-sdk', { paths: [installed.dir] })).toBe(
      join(installed.dir, 'node_modules', 'ojs-sdk', 'dist', 'src', 'index.js'),
    );
  });

  it('runs a job enqueued by its Producer on its Worker, from a project outside the repository', async () => {
    const env = { ...process.env, OJS_SERVER: server.address, OJS_SHUTDOWN_GRACE_PERIOD: '2s' };
    const worker = spawn(process.execPath, ['worker.js'], { cwd: installed.dir, env, stdio: ['ignore', 'ignore', 'inherit'] });
    const exited = once(worker, 'exit');
    try {
      const produced = await run(process.execPath, ['producer.js'], { cwd: installed.dir, env, timeout: 30_000 });
      const output = JSON.parse(produced.stdout) as { id: string; state: string; result: unknown };
      expect(output.state).toBe('available');
      expect(output.result).toEqual({ sum: 5, attempt: 1, state: 'active' });
    } finally {
      worker.kill('SIGTERM');
      await exited;
    }
    expect(worker.exitCode).toBe(0);
  });
});
