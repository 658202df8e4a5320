import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { WorkerState, type FetchResponse } from '../../gen/ojs/server/v1/worker_service';
import { enqueueOne } from '../support/jobs';
import { ManualClock } from '../support/manual-clock';
import { TestServer, TEST_PROTOCOL, type Clients } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

describe('OpenTelemetry spans', () => {
  const clock = new ManualClock();
  let server: TestServer;
  let clients: Clients;

  beforeAll(async () => {
    server = await TestServer.start({ clock });
    clients = server.connect();
  });
  afterAll(() => server.stop());

  const attributesOf = (spans: ReadableSpan[], name: string, key: string, value: string) =>
    spans.filter((s) => s.name === name && s.attributes[key] === value).map((s) => s.attributes);

  it('records a span for every job transition, carrying states, ids, type, queue, attempt and worker', async () => {
    const worker = await TestWorker.register(clients, { queues: ['traced'] });
    const fetch = worker.openFetch();
    const job = await enqueueOne(clients, { queue: 'traced', type: 'trace.me' });
    const [delivery] = (await fetch.nextMatching((m: FetchResponse) => m.deliveries.length > 0)).deliveries;
    await worker.fail(delivery!, { type: 'Boom' });
    fetch.close();
    const common = { 'messaging.system': 'ojs', 'ojs.job.id': job.id, 'ojs.job.type': 'trace.me', 'ojs.job.queue': 'traced' };
    expect(attributesOf(server.spans.getFinishedSpans(), 'ojs.job.transition', 'ojs.job.id', job.id)).toEqual([
      { ...common, 'ojs.job.state.from': 'none', 'ojs.job.state.to': 'available', 'ojs.job.state': 'available', 'ojs.job.attempt': 0 },
      {
        ...common,
        'ojs.job.state.from': 'available',
        'ojs.job.state.to': 'active',
        'ojs.job.state': 'active',
        'ojs.job.attempt': 1,
        'ojs.worker.id': worker.workerId,
      },
      {
        ...common,
        'ojs.job.state.from': 'active',
        'ojs.job.state.to': 'retryable',
        'ojs.job.state': 'retryable',
        'ojs.job.attempt': 1,
        'ojs.worker.id': worker.workerId,
      },
    ]);
  });

  it('records a span for every worker transition, up to its removal', async () => {
    const worker = await TestWorker.register(clients);
    const beat = worker.openBeat();
    await beat.beat(WorkerState.WORKER_STATE_QUIET);
    beat.close();
    clock.advance(TEST_PROTOCOL.heartbeatTimeoutMs + 1);
    await server.runMaintenance();
    const transitions = attributesOf(server.spans.getFinishedSpans(), 'ojs.worker.transition', 'ojs.worker.id', worker.workerId).map(
      (a) => [a['ojs.worker.state.from'], a['ojs.worker.state.to'], a['ojs.worker.reason']],
    );
    expect(transitions).toEqual([
      ['none', 'running', undefined],
      ['running', 'quiet', undefined],
      ['quiet', 'terminated', 'dead'],
    ]);
  });
});
