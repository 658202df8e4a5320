import * as fc from 'fast-check';
import { Status } from 'nice-grpc';
import { JobState, Job } from '../../gen/ojs/server/v1/job';
import { JobServiceDefinition } from '../../gen/ojs/server/v1/job_service';
import { AckRequest, type Delivery } from '../../gen/ojs/server/v1/worker_service';
import { DEFAULT_PAYLOAD_LIMITS } from '../../src/domain/limits';
import { encodedClient } from '../support/encoded-requests';
import { envelopeCase, type EnvelopeCase } from '../support/envelope-arbitraries';
import { expectedAnswer, judgeEnqueue, sendEnvelope, type SentEnvelope } from '../support/envelope-oracle';
import { ManualClock } from '../support/manual-clock';
import { propertyParameters } from '../support/property';
import { rpcError } from '../support/rpc-error';
import { TestServer, type Clients } from '../support/test-server';
import { TEST_PROTOCOL } from '../support/test-protocol';
import { TestWorker } from '../support/test-worker';
import { within } from '../support/waiting';

/**
 * Whatever envelope the server accepts, it stores, reads back, delivers and
 * completes exactly as it answered it: GetJob encodes byte for byte like the
 * Enqueue answer (and like itself on every read), a worker receives the same
 * envelope but for the fields a claim sets, and the acknowledged job reads
 * back the same on every read. Whatever it refuses, it refuses with
 * INVALID_ARGUMENT naming an invalid field (RESOURCE_EXHAUSTED for a job over
 * the size limit), storing nothing. The clock stands still, so that whether
 * a job is due or expired is decided by the envelope alone.
 * (OJS_PROPERTY_SEED replays a failure, OJS_PROPERTY_RUNS runs more.)
 */
describe('the envelope round trip', () => {
  const clock = new ManualClock();
  let server: TestServer;
  let clients: Clients;
  let raw: ReturnType<typeof encodedClient<typeof JobServiceDefinition>>;

  beforeAll(async () => {
    server = await TestServer.start({ clock });
    clients = server.connect();
    raw = encodedClient(JobServiceDefinition, clients.channel);
  });
  afterAll(() => server.stop());

  const limits = { maxJobBytes: DEFAULT_PAYLOAD_LIMITS.maxJobBytes, jobTimeoutMs: TEST_PROTOCOL.jobTimeoutMs };
  /** Fields a claim sets; the rest of a delivered envelope is the enqueued one. */
  const unclaimed = (job: Job): Uint8Array =>
    Job.encode({
      ...job,
      state: JobState.JOB_STATE_UNSPECIFIED,
      attempt: 0,
      startedAt: undefined,
      workerId: '',
      enqueuedAt: undefined,
    }).finish();

  async function readBack(jobId: string): Promise<Job> {
    return (await clients.jobs.getJob({ jobId })).job!;
  }

  /** Outcomes seen, so that a run that never reaches the store (or never refuses) fails. */
  const seen = { accepted: 0, refused: 0 };

  async function enqueueAndCheck(cases: EnvelopeCase[], pending: boolean): Promise<void> {
    const sent = cases.map(sendEnvelope);
    const { request, verdict } = judgeEnqueue(sent, pending, limits);
    const expected = expectedAnswer(verdict);
    const call = raw.enqueue(request);
    const failure = await call.then(
      () => undefined,
      () => rpcError(call),
    );
    const answer = failure ?? { code: Status.OK, reason: '', fields: [] };
    // A refusal names at least one field, and only fields that earned it.
    expect({
      code: Status[answer.code],
      reason: answer.reason,
      isNamingAField: answer.fields.length > 0,
      unearned: answer.fields.filter((field) => !expected.mayName(field)),
    }).toEqual({
      code: Status[expected.code],
      reason: expected.reasons.includes(answer.reason ?? '') ? answer.reason : expected.reasons.join(' or '),
      isNamingAField: expected.code !== Status.OK,
      unearned: [],
    });
    if (answer.code !== Status.OK) {
      seen.refused += 1;
      return expectNothingStored(sent);
    }
    seen.accepted += 1;
    const { jobs } = await call;
    expect(jobs).toHaveLength(sent.length);
    await expectRoundTrip(sent, jobs, pending);
  }

  /** A refused request stored none of its jobs. */
  async function expectNothingStored(sent: readonly SentEnvelope[]): Promise<void> {
    const chosen = sent.flatMap(({ clientId }) => (clientId === undefined ? [] : [clientId]));
    const codes = await Promise.all(chosen.map(async (id) => (await rpcError(readBack(id))).code));
    expect(codes).toEqual(chosen.map(() => Status.NOT_FOUND));
  }

  async function expectRoundTrip(sent: readonly SentEnvelope[], answer: Job[], pending: boolean): Promise<void> {
    const fetchable = new Map<string, { answered: Job; result: EnvelopeCase['result'] }>();
    for (const [i, answered] of answer.entries()) {
      if (sent[i]!.clientId !== undefined) expect(answered.id).toBe(sent[i]!.clientId);
      expectSameBytes(Job.encode(await readBack(answered.id)).finish(), Job.encode(answered).finish(), `GetJob of ${answered.id}`);
      const current = pending ? (await clients.jobs.activateJob({ jobId: answered.id })).job! : answered;
      const isExpired = answered.expiresAt !== undefined && answered.expiresAt.getTime() <= clock.now();
      if (current.state === JobState.JOB_STATE_AVAILABLE && !isExpired) {
        fetchable.set(answered.id, { answered, result: sent[i]!.case.result });
      }
    }
    if (fetchable.size === 0) return;
    const queues = [...new Set([...fetchable.values()].map(({ answered }) => answered.queue))];
    const worker = await TestWorker.register(clients, { queues, concurrency: fetchable.size });
    const fetch = worker.openFetch();
    let released: string[] = [];
    try {
      const delivered = new Map<string, Delivery>();
      while (delivered.size < fetchable.size) {
        const message = await within(
          fetch.nextMatching((m) => m.deliveries.length > 0),
          10_000,
          `the deliveries of ${[...fetchable.keys()].filter((id) => !delivered.has(id)).join(', ')}`,
        );
        for (const delivery of message.deliveries) {
          const id = delivery.job!.id;
          expect({ id, isExpected: fetchable.has(id), isRepeated: delivered.has(id) }).toEqual({ id, isExpected: true, isRepeated: false });
          delivered.set(id, delivery);
          expectSameBytes(unclaimed(delivery.job!), unclaimed(fetchable.get(id)!.answered), `the delivery of ${id}`);
        }
      }
      for (const [id, delivery] of delivered) await acknowledge(worker, delivery, fetchable.get(id)!.result);
    } finally {
      // Whatever happened, the worker leaves and takes no job of a later run (fast-check shrinks on the same server).
      fetch.close();
      released = (await clients.workers.deregister({ workerId: worker.workerId })).releasedJobIds;
    }
    expect(released).toEqual([]);
  }

  /** Acks with the generated result (without one when it is refused), then reads the completed job back twice. */
  async function acknowledge(worker: TestWorker, delivery: Delivery, result: EnvelopeCase['result']): Promise<void> {
    const jobId = delivery.job!.id;
    const decoded = AckRequest.decode(AckRequest.encode(AckRequest.fromPartial({ result: result.value })).finish()).result as unknown;
    if (result.isValid) await worker.ack(delivery, decoded);
    else {
      const refused = await rpcError(worker.ack(delivery, decoded));
      expect({ code: refused.code, fields: refused.fields }).toEqual({ code: Status.INVALID_ARGUMENT, fields: ['result'] });
      await worker.ack(delivery);
    }
    const [first, second] = [await readBack(jobId), await readBack(jobId)];
    expectSameBytes(Job.encode(second).finish(), Job.encode(first).finish(), `two reads of completed job ${jobId}`);
    expect(first.state).toBe(JobState.JOB_STATE_COMPLETED);
    // As JSON would carry it: -0 is stored as 0.
    expect(first.result).toEqual(result.isValid ? JSON.parse(JSON.stringify(decoded)) : undefined);
  }

  it('keeps every envelope it accepts byte for byte, one per call, and refuses the rest naming the field', async () => {
    Object.assign(seen, { accepted: 0, refused: 0 });
    await fc.assert(
      fc.asyncProperty(envelopeCase({ isAlone: true }), fc.boolean(), (c, pending) => enqueueAndCheck([c], pending)),
      propertyParameters(100),
    );
    expect(seen.accepted).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  }, 120_000);

  it('keeps every batch it accepts byte for byte, and refuses a batch with any bad envelope whole', async () => {
    Object.assign(seen, { accepted: 0, refused: 0 });
    await fc.assert(
      fc.asyncProperty(batchOfEnvelopes, fc.boolean(), (cases, pending) => enqueueAndCheck(cases, pending)),
      propertyParameters(50),
    );
    expect(seen.accepted).toBeGreaterThan(0);
  }, 120_000);
});

/** Two to six clean envelopes, and in a third of the batches one that may be anything, at any place. */
const batchOfEnvelopes = fc
  .tuple(
    fc.array(envelopeCase({ isAlone: false, isClean: true }), { minLength: 1, maxLength: 5 }),
    fc.oneof({ arbitrary: fc.constant(undefined), weight: 2 }, envelopeCase({ isAlone: false })),
    fc.nat(),
  )
  .map(([clean, any, at]) => (any === undefined ? clean : clean.toSpliced(at % (clean.length + 1), 0, any)))
  .filter((cases) => cases.length >= 2);

/** Fails naming the first differing byte and both envelopes, shortened (a diff of two megabytes helps nobody). */
function expectSameBytes(actual: Uint8Array, expected: Uint8Array, what: string): void {
  if (Buffer.from(actual).equals(Buffer.from(expected))) return;
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at++;
  const show = (bytes: Uint8Array) => JSON.stringify(Job.decode(bytes)).slice(0, 2_000);
  throw new Error(
    `${what} differs from the Enqueue answer at byte ${at} (${actual.length} vs ${expected.length} bytes):\n` +
      `  read:     ${show(actual)}\n  answered: ${show(expected)}`,
  );
}
