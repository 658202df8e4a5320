import { Status } from 'nice-grpc';
import type { Delivery, FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { MemoryJobStore } from '../../src/store/memory/memory-job-store';
import { enqueue } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { rpcError } from '../support/rpc-error';
import { TestServer, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

/**
 * The memory store's bound seen by a client: a full store answers Enqueue
 * with RESOURCE_EXHAUSTED (retryable), and takes jobs again once finished
 * ones are removed by retention. (This file serves a memory store whatever
 * the test project's backend.)
 */
describe('a memory store at its bound', () => {
  const clock = new ManualClock();
  let server: TestServer;
  let clients: Clients;

  beforeAll(async () => {
    server = await TestServer.start({
      clock,
      store: async () => new MemoryJobStore({ maxJobs: 3 }),
      retention: { completedMs: 1_000, cancelledMs: 1_000, discardedMs: 1_000, maxJobs: 0 },
    });
    clients = server.connect();
  });
  afterAll(() => server.stop());

  it('refuses enqueues with RESOURCE_EXHAUSTED until retention removes finished jobs', async () => {
    await enqueue(clients, {}, {}, {});
    const full = await rpcError(enqueue(clients, {}));
    expect(full).toMatchObject({ code: Status.RESOURCE_EXHAUSTED, reason: 'queue_full', metadata: { bound: 'jobs', retryable: 'true' } });
    expect(full.message).toContain('at most 3');

    const worker = await TestWorker.register(clients);
    const fetch = worker.openFetch();
    const deliveries: Delivery[] = [];
    while (deliveries.length < 3) deliveries.push(...(await fetch.nextMatching((m: FetchResponse) => m.deliveries.length > 0)).deliveries);
    fetch.close();
    for (const delivery of deliveries) await worker.ack(delivery);
    expect((await rpcError(enqueue(clients, {}))).code).toBe(Status.RESOURCE_EXHAUSTED);

    clock.advance(1_000);
    await server.runMaintenance();
    expect(await enqueue(clients, {}, {}, {})).toHaveLength(3);
  });
});
