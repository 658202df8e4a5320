import { Worker, JobFailure } from '../../packages/sdk/src';
import { runInThread } from './run-in-thread';

/**
 * A small OJS worker written with the TypeScript SDK.
 *
 *   npm run build && OJS_QUEUES=default,email node dist/examples/ts-worker/worker.js
 *
 * It takes its settings from the environment (OJS_SERVER, OJS_QUEUES,
 * OJS_CONCURRENCY, OJS_SHUTDOWN_GRACE_PERIOD, OJS_READINESS_PORT) and stops
 * gracefully on SIGTERM or Ctrl+C.
 */
const worker = new Worker();

// Execution middleware: here, timing every job.
worker.use(async (ctx, next) => {
  const started = Date.now();
  try {
    return await next(ctx);
  } finally {
    ctx.logger.info({ ms: Date.now() - started }, 'job finished');
  }
});

// An I/O-bound handler: it passes its AbortSignal on, so a timeout,
// a cancellation or a shutdown stops it promptly.
worker.handle('email.send', async ([to, subject], ctx) => {
  if (typeof to !== 'string' || !to.includes('@')) {
    // A job that can never succeed: discard it instead of retrying.
    throw new JobFailure(`not an address: ${String(to)}`, { type: 'email.invalid_address', code: 'discard' });
  }
  const response = await fetch(process.env['MAIL_API'] ?? 'http://127.0.0.1:8025/send', {
    method: 'POST',
    body: JSON.stringify({ to, subject }),
    signal: ctx.signal,
  });
  return { status: response.status };
});

// A long job that saves checkpoints, so a retry resumes where the last attempt stopped.
worker.handle('report.build', async ([rows], ctx) => {
  const total = Number(rows);
  let done = typeof ctx.lastCheckpoint === 'number' ? ctx.lastCheckpoint : 0;
  while (done < total) {
    ctx.signal.throwIfAborted();
    done = Math.min(total, done + 1_000);
    await ctx.checkpoint(done);
    await ctx.progress(done / total);
  }
  return { rows: done };
});

// A CPU-bound handler runs in a worker thread: the event loop stays free for
// beats and other jobs, and aborting the job terminates the thread.
worker.handle('math.fibonacci', async ([n], ctx) => runInThread(Number(n), ctx.signal));

void worker.run().then((code) => process.exit(code));
