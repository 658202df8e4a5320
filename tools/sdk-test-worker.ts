import { JobFailure, Worker } from '../packages/sdk/src';

/**
 * The worker the SDK tests run as a real process (dist/tools/sdk-test-worker.js),
 * configured like any SDK worker (OJS_SERVER, OJS_QUEUES, OJS_CONCURRENCY,
 * OJS_SHUTDOWN_GRACE_PERIOD, OJS_READINESS_PORT, OJS_TLS_CA, OJS_TLS_CERT,
 * OJS_TLS_KEY, OJS_TOKEN). Its job types exercise the SDK; it prints one
 * JSON line per job event for the tests to wait on.
 */
const worker = new Worker();
let running = 0;

const print = (event: string, fields: Record<string, unknown> = {}): void => {
  process.stdout.write(`${JSON.stringify({ test: event, ...fields })}\n`);
};

/** Resolves after `ms`, or rejects with the signal's reason when it fires first. */
const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted', { cause: signal.reason }));
    });
  });

worker.use(async (ctx, next) => {
  running += 1;
  print('start', { jobId: ctx.job.id, running, attempt: ctx.attempt, lastCheckpoint: ctx.lastCheckpoint });
  try {
    const result = await next(ctx);
    print('done', { jobId: ctx.job.id });
    return result;
  } catch (error) {
    print('threw', { jobId: ctx.job.id, reason: ctx.signal.aborted ? (ctx.signal.reason as { kind?: string }).kind : undefined });
    throw error;
  } finally {
    running -= 1;
  }
});

worker
  .handle('test.echo', async (args) => ({ echoed: args }))
  .handle('test.sleep', async ([ms], ctx) => {
    await sleep(Number(ms), ctx.signal);
    return 'slept';
  })
  .handle('test.checkpoint', async ([ms], ctx) => {
    await ctx.progress(0.5, { phase: 'half' });
    await ctx.checkpoint({ resumeFrom: ctx.attempt });
    await sleep(Number(ms), ctx.signal);
    return 'finished';
  })
  .handle('test.fail', async ([type]) => {
    throw new JobFailure('failed on purpose', { type: typeof type === 'string' ? type : 'test.failure' });
  })
  .handle('test.block', async ([ms]) => {
    // Blocks the event loop, as a CPU-bound handler would.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(ms));
    return 'unblocked';
  });

worker.on('phase', (phase: string) => print('phase', { phase }));
worker.run().then(
  (code) => {
    print('exit', { code });
    process.exit(code);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
