import { Status } from 'nice-grpc';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import type { Job } from '../../src/domain/job';
import type { JobStore } from '../../src/store/job-store';
import { jobSpec } from '../support/jobs';
import { rpcError } from '../support/rpc-error';
import { StreamReader } from '../support/streams';
import { defaultTestStore, TestServer } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

/**
 * The real store, with one enqueue held at a gate: how a test keeps a unary
 * call in flight while the server stops, without guessing at timing.
 */
function withHeldEnqueue(store: JobStore): { store: JobStore; arrived: Promise<void>; release: () => void } {
  let arrived!: () => void;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held = new Promise<void>((resolve) => (arrived = resolve));
  const enqueue = store.enqueue.bind(store);
  store.enqueue = async (jobs: readonly Job[]): Promise<void> => {
    arrived();
    await gate;
    return enqueue(jobs);
  };
  return { store, arrived: held, release };
}

/** graceful-shutdown.md section 8 on one replica: what its clients see while it stops. */
describe('server shutdown', () => {
  it('turns NOT_SERVING, refuses new calls, finishes calls in flight and ends streams with UNAVAILABLE', async () => {
    const gated = withHeldEnqueue(await defaultTestStore());
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

    const inFlight = clients.jobs.enqueue({ jobs: [jobSpec({ type: 'late.job' })] });
    await gated.arrived;
    const stopped = server.server.stop(10_000);

    expect(await health.next()).toEqual({ status: HealthCheckResponse_ServingStatus.NOT_SERVING });
    for (const stream of [health.ended(), beat.responses.ended(), fetch.ended(), events.ended()]) {
      expect((await rpcError(stream)).code).toBe(Status.UNAVAILABLE);
    }
    const refused = await rpcError(clients.jobs.getJob({ jobId: 'any' }));
    expect(refused.code).toBe(Status.UNAVAILABLE);

    gated.release();
    expect((await inFlight).jobs[0]).toMatchObject({ type: 'late.job' });
    await stopped;
    expect(server.logger.entries.filter((e) => e.level === 'error')).toEqual([]);
    await server.stop();
  });
});
