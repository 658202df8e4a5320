import type { Delivery, WorkerServiceClient } from '../../gen/ojs/server/v1/worker_service';
import { Settlements } from '../../packages/sdk/src/settlements';
import { enqueue } from '../support/jobs';
import { RecordingLogger } from '../support/silent-logger';
import { shareServer } from '../support/shared-server';
import { TestWorker } from '../support/test-worker';

/**
 * Settlements sent as a database groups commits: one goes at once when no
 * call is under way; those made while one is wait for its answer and go
 * together in the next call.
 */
describe('SDK settlements grouped while a call is under way', () => {
  const shared = shareServer();

  async function held(queue: string, count: number): Promise<{ workerId: string; deliveries: Delivery[] }> {
    const holder = await TestWorker.register(shared.clients, { queues: [queue], concurrency: count });
    await enqueue(shared.clients, ...Array.from({ length: count }, () => ({ type: 'grouped.ack', queue })));
    const fetch = holder.openFetch();
    const deliveries: Delivery[] = [];
    while (deliveries.length < count) deliveries.push(...(await fetch.next()).deliveries);
    fetch.close();
    return { workerId: holder.workerId, deliveries };
  }

  it('sends the first ack at once and the acks made while it is answered together, in one more call', async () => {
    const { workerId, deliveries } = await held('grouped-acks', 6);
    const calls: number[] = [];
    let started!: () => void;
    const isStarted = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const client: WorkerServiceClient = {
      ...shared.clients.workers,
      ackBatch: async (request, options) => {
        calls.push(request.completions?.length ?? 0);
        if (calls.length === 1) {
          started();
          await gate;
        }
        return shared.clients.workers.ackBatch(request, options);
      },
    };
    const settlements = new Settlements(client, workerId, new RecordingLogger());
    const ack = (d: Delivery) => settlements.ack(d.job!.id, d.leaseToken, null);

    const first = ack(deliveries[0]!);
    await isStarted;
    const rest = deliveries.slice(1).map(ack);
    // A turn of the event loop: when they would have gone on their own.
    await new Promise(setImmediate);
    expect(calls).toEqual([1]);
    release();

    expect(await Promise.all([first, ...rest])).toEqual(deliveries.map(() => ({ ok: true })));
    expect(calls).toEqual([1, 5]);
    settlements.close();
  });
});
