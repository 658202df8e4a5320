import { createChannel, createClient, Metadata } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { HealthCheckResponse_ServingStatus } from 'nice-grpc-server-health/lib/proto/grpc/health/v1/health';
import { ServerProcess } from '../../tools/server-process';
import { jobSpec } from '../support/jobs';
import { OtlpReceiver } from '../support/otlp-receiver';
import { producerSpan } from '../support/producer-span';
import { connectTo } from '../support/test-server';
import { TestWorker } from '../support/test-worker';

/** The compiled entry point that `npm start` runs (the test command builds it first). */
describe('the server process', () => {
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
  });

  it('refuses at start-up a heartbeat timeout shorter than three heartbeat intervals', async () => {
    await expect(ServerProcess.start({}, ['--heartbeat-interval', '5s', '--heartbeat-timeout', '10s'])).rejects.toThrow(
      /exited with 2 before printing that it listens[\s\S]*invalid configuration:\n {2}- OJS_HEARTBEAT_TIMEOUT \(--heartbeat-timeout\) \(10s\) must be at least three heartbeat intervals/,
    );
  });

  /**
   * The SDK main.ts starts from the standard OTEL_* variables, exporting
   * OTLP over HTTP (JSON) to a receiver in the test. One job runs through
   * (enqueued under a producer's span, claimed, acked); stopping the server
   * flushes every span and a last collection of the metrics before it exits.
   */
  describe('exporting over OTLP when the OTEL_* variables name an endpoint', () => {
    let receiver: OtlpReceiver;
    const producer = producerSpan();
    const queue = 'otlp';
    let jobId: string;

    beforeAll(async () => {
      receiver = await OtlpReceiver.start();
      const server = await ServerProcess.start({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_LOGS_EXPORTER: 'none',
      });
      servers.push(server);
      const clients = connectTo(server.address);
      const worker = await TestWorker.register(clients, { queues: [queue] });
      const fetch = worker.openFetch();
      const metadata = Metadata({ traceparent: producer.traceparent });
      const { jobs } = await clients.jobs.enqueue({ jobs: [jobSpec({ queue, type: 'otlp.check' })] }, { metadata });
      jobId = jobs[0]!.id;
      await worker.ack((await fetch.nextMatching((m) => m.deliveries.length > 0)).deliveries[0]!);
      fetch.close();
      clients.channel.close();
      const exitCode = await server.stop('SIGTERM');
      if (exitCode !== 0) throw new Error(`the server exited with ${exitCode} on SIGTERM`);
    });
    afterAll(() => receiver.close());

    const transitionSpans = () => receiver.spans.filter((s) => s.name === 'ojs.job.transition' && s.attributes['ojs.job.id'] === jobId);

    it("puts every transition span of the job in the producer's trace, under the producer's span", async () => {
      await receiver.waitFor('the three transition spans of the job', () => transitionSpans().length === 3);
      const spans = transitionSpans();
      expect(spans.map((s) => s.attributes['ojs.job.state.to'])).toEqual(['available', 'active', 'completed']);
      expect(spans.map((s) => [s.traceId, s.parentSpanId])).toEqual(spans.map(() => [producer.context.traceId, producer.context.spanId]));
      // OTLP span kinds: 4 producer (the enqueue), 1 internal.
      expect(spans.map((s) => s.kind)).toEqual([4, 1, 1]);
    });

    it('exports the job counters, and the histograms with the bucket boundaries of ojs-events 7.2', async () => {
      const labels = { queue, job_type: 'otlp.check' };
      const point = (metric: string) => receiver.points.find((p) => p.metric === metric && p.attributes['queue'] === queue);
      await receiver.waitFor('the job metrics', () => point('ojs.jobs.duration_ms') !== undefined);
      expect([point('ojs.jobs.enqueued'), point('ojs.jobs.completed')]).toEqual([
        { metric: 'ojs.jobs.enqueued', attributes: labels, value: 1 },
        { metric: 'ojs.jobs.completed', attributes: labels, value: 1 },
      ]);
      expect(point('ojs.jobs.duration_ms')?.explicitBounds).toEqual([
        5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000,
      ]);
      expect(point('ojs.jobs.wait_ms')?.explicitBounds).toEqual([10, 50, 100, 500, 1000, 5000, 10000, 30000, 60000, 300000, 600000]);
    });
  });

  it('serves the in-memory store, logs JSON, and exits 0 on SIGTERM', async () => {
    const server = await ServerProcess.start();
    servers.push(server);
    expect(server.logs.find((l) => l.msg === 'ojs server listening')).toMatchObject({
      backend: 'memory',
      level: 30,
      service: 'ojs-grpc-server',
    });
    const channel = createChannel(server.address);
    expect((await createClient(HealthDefinition, channel).check({ service: '' })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    channel.close();
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
