import { Status } from 'nice-grpc';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import type { JobStore } from '../../src/store/job-store';
import { jobSpec } from '../support/jobs';
import { rpcError } from '../support/rpc-error';
import { StreamReader } from '../support/streams';
import { defaultTestStore, TestServer } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

/**
 * The real store, with one call of `method` held at a gate: how a test
 * keeps a call in flight while the server stops, without guessing at timing.
 */
function holdOne(
  store: JobStore,
  method: 'enqueue' | 'followFacts' | 'getWorker',
): { store: JobStore; arrived: Promise<void>; release: () => void } {
  let arrived!: () => void;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held = new Promise<void>((resolve) => (arrived = resolve));
  const original = (store[method] as (...args: unknown[]) => Promise<unknown>).bind(store);
  let isHeld = false;
  const replacement = async (...args: unknown[]): Promise<unknown> => {
    if (!isHeld) {
      isHeld = true;
      arrived();
      await gate;
    }
    return original(...args);
  };
  Object.assign(store, { [method]: replacement });
  return { store, arrived: held, release };
}

/** A call's outcome, settled at once: a failure before the test looks at it fails the test instead of crashing the runner. */
function settled<T>(call: Promise<T>): Promise<{ answer: T } | { error: unknown }> {
  return call.then(
    (answer) => ({ answer }),
    (error: unknown) => ({ error }),
  );
}

/** graceful-shutdown.md section 8 on one replica: what its clients see while it stops. */
describe('server shutdown', () => {
  it('turns NOT_SERVING, refuses new calls, finishes calls in flight and ends streams with UNAVAILABLE', async () => {
    const gated = holdOne(await defaultTestStore(), 'enqueue');
    const server = await TestServer.start({ store: async () => gated.store });
    const clients = server.connect();
    const worker = await TestWorker.register(clients);
    const beat = worker.openBeat();
    await beat.beat();
    const fetch = worker.openFetch();
    const abort = new AbortController();
    const health = new StreamReader(clients.health.watch({ service: '' }, { signal: abort.signal }), abort);
    expect(await health.next()).toEqual({ status: HealthCheckResponse_ServingStatus.SERVING });
    const events = new StreamReader(clients.operator.watchEvents({ types: [], queues: [] }, { signal: abort.signal }), abort);

    const inFlight = settled(clients.jobs.enqueue({ jobs: [jobSpec({ type: 'late.job' })] }));
    await gated.arrived;
    const stopped = server.server.stop(10_000);

    expect(await health.next()).toEqual({ status: HealthCheckResponse_ServingStatus.NOT_SERVING });
    for (const stream of [health.ended(), beat.responses.ended(), fetch.ended(), events.ended()]) {
      expect((await rpcError(stream)).code).toBe(Status.UNAVAILABLE);
    }
    const refused = await rpcError(clients.jobs.getJob({ jobId: 'any' }));
    expect(refused.code).toBe(Status.UNAVAILABLE);

    gated.release();
    expect(await inFlight).toMatchObject({ answer: { jobs: [{ type: 'late.job' }] } });
    await stopped;
    expect(server.logger.entries.filter((e) => e.level === 'error')).toEqual([]);
    await server.stop();
  });

  it.each([
    ['WatchEvents', 'followFacts'],
    ['Fetch', 'getWorker'],
  ] as const)('ends a %s stream that was still opening when the server stopped', async (_name, method) => {
    const gated = holdOne(await defaultTestStore(), method);
    const server = await TestServer.start({ store: async () => gated.store });
    const clients = server.connect();
    const abort = new AbortController();
    let stream: StreamReader<unknown>;
    if (method === 'followFacts') {
      stream = new StreamReader(clients.operator.watchEvents({ types: [], queues: [] }, { signal: abort.signal }), abort);
    } else {
      const worker = await TestWorker.register(clients);
      stream = worker.openFetch();
    }
    await gated.arrived;
    const stopped = server.server.stop(10_000);
    gated.release();
    expect((await rpcError(stream.ended())).code).toBe(Status.UNAVAILABLE);
    await stopped;
    await server.stop();
  });
});
