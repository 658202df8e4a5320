import { randomUUID } from 'node:crypto';
import { ClientError, Status } from 'nice-grpc';
import { WorkerState, type BeatResponse, type FetchResponse } from '../../../packages/sdk/gen/ojs/server/v1/worker_service';
import { WorkerStreamClient } from '../../../packages/sdk/src/worker-stream-client';
import { enqueueOne } from '../../support/jobs';
import { shareServer } from '../../support/shared-server';
import { TestWorker } from '../../support/test-worker';

const RUNNING = WorkerState.WORKER_STATE_RUNNING;

/**
 * The SDK's Beat and Fetch streams on grpc-js directly (worker-stream-client.ts):
 * messages in order, a clean end as undefined, the server's status as nice-grpc's
 * ClientError, and a handler that throws ending its stream rather than the process.
 */
describe("the SDK's worker streams", () => {
  const shared = shareServer();
  const streamsOf = (): WorkerStreamClient => new WorkerStreamClient(shared.server.connect().channel, undefined);
  const beat = (workerId: string, sequence: number) => ({ workerId, state: RUNNING, activeJobs: 0, activeJobIds: [], sequence });

  it('answers every beat in order, and ends as CANCELLED once cancelled', async () => {
    const worker = await TestWorker.register(shared.clients);
    const answers: BeatResponse[] = [];
    let answered: () => void = () => undefined;
    const allAnswered = new Promise<void>((resolve) => (answered = resolve));
    const call = streamsOf().beat((answer) => {
      if (answers.push(answer) === 3) answered();
    });
    for (const sequence of [1, 2, 3]) call.write(beat(worker.workerId, sequence));
    await allAnswered;
    expect(answers.map((answer) => answer.inReplyTo)).toEqual([1, 2, 3]);
    call.cancel();
    await expect(call.ended).resolves.toMatchObject({ code: Status.CANCELLED });
  });

  it("ends with the server's refusal as a ClientError of the method: an unknown worker's beat is NOT_FOUND", async () => {
    const call = streamsOf().beat(() => undefined);
    call.write(beat(`unknown-${randomUUID()}`, 1));
    const end = await call.ended;
    expect(end).toBeInstanceOf(ClientError);
    expect(end).toMatchObject({ code: Status.NOT_FOUND, path: '/ojs.server.v1.WorkerService/Beat' });
  });

  it('delivers a job on the Fetch stream, which ends cleanly once the worker beats quiet', async () => {
    const queue = `streams-${randomUUID()}`;
    const worker = await TestWorker.register(shared.clients, { queues: [queue] });
    let delivered: (response: FetchResponse) => void = () => undefined;
    const firstDelivery = new Promise<FetchResponse>((resolve) => (delivered = resolve));
    const streams = streamsOf();
    const call = streams.fetch({ workerId: worker.workerId, queues: [], maxWait: undefined }, (response) => {
      if (response.deliveries.length > 0) delivered(response);
    });
    const job = await enqueueOne(shared.clients, { queue });
    expect((await firstDelivery).deliveries.map((delivery) => delivery.job!.id)).toEqual([job.id]);
    // The server ends the Fetch stream itself, with OK, when it hears the worker leave running.
    const beats = streams.beat(() => undefined);
    beats.write({ ...beat(worker.workerId, 1), state: WorkerState.WORKER_STATE_QUIET });
    await expect(call.ended).resolves.toBeUndefined();
    beats.cancel();
  });

  it('ends a stream whose handler throws with what it threw, and hands it nothing more', async () => {
    const worker = await TestWorker.register(shared.clients);
    const thrown = new Error('a handler that fails');
    let calls = 0;
    const call = streamsOf().beat(() => {
      calls += 1;
      throw thrown;
    });
    call.write(beat(worker.workerId, 1));
    call.write(beat(worker.workerId, 2));
    await expect(call.ended).resolves.toBe(thrown);
    expect(calls).toBe(1);
  });
});
