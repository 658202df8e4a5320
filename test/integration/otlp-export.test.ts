import { METRIC, SPAN } from '../../src/telemetry/telemetry-names';
import { ServerProcess } from '../../tools/server-process';
import { jobSpec } from '../support/jobs';
import { OtlpGrpcReceiver } from '../support/otlp-grpc-receiver';
import { OtlpReceiver, type ProtobufExport } from '../support/otlp-receiver';
import { connectTo } from '../support/test-server';

/** Whether the protobuf body of an export carries this string (protobuf writes strings as their UTF-8 bytes). */
const carries = (exported: ProtobufExport, text: string): boolean => exported.body.includes(Buffer.from(text, 'utf8'));

/**
 * The real server process exporting over each OTLP protocol it ships
 * (http/protobuf, http/json, grpc) and refusing the exporters it does not.
 * Runs in the memory project only: it is about the process's environment,
 * whatever the store.
 */
describe('OTLP export from the server process', () => {
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    for (const server of servers) await server.kill();
  });

  /** Enqueues one job on a server started with `env`, then stops it, which flushes its spans and metrics. */
  async function exportOneJob(env: Record<string, string>): Promise<void> {
    const server = await ServerProcess.start(env);
    servers.push(server);
    const clients = connectTo(server.address);
    await clients.jobs.enqueue({ jobs: [jobSpec({ queue: 'otlp', type: 'otlp.check' })] });
    clients.channel.close();
    expect(await server.stop('SIGTERM')).toBe(0);
  }

  /** Expects one span export and one metric export in protobuf, each naming the server and what it observed. */
  function expectProtobufExports(exports: readonly ProtobufExport[]): void {
    const traces = exports.filter((e) => e.path === '/v1/traces');
    const metrics = exports.filter((e) => e.path === '/v1/metrics');
    expect(traces.some((e) => carries(e, SPAN.jobTransition) && carries(e, 'ojs-grpc-server'))).toBe(true);
    expect(metrics.some((e) => carries(e, METRIC.jobsEnqueued) && carries(e, 'ojs-grpc-server'))).toBe(true);
  }

  it('exports spans and metrics as OTLP protobuf over HTTP when no protocol is set (http/protobuf, the OTLP default)', async () => {
    const receiver = await OtlpReceiver.start();
    try {
      await exportOneJob({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
      expectProtobufExports(receiver.protobufExports);
      expect(receiver.bodies).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('exports spans and metrics as OTLP/JSON with OTEL_EXPORTER_OTLP_PROTOCOL=http/json', async () => {
    const receiver = await OtlpReceiver.start();
    try {
      await exportOneJob({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
      expect(receiver.spans.map((s) => s.name)).toContain(SPAN.jobTransition);
      expect(receiver.points.map((p) => p.metric)).toContain(METRIC.jobsEnqueued);
      expect(receiver.protobufExports).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it("takes each signal's protocol from its own variable before the general one", async () => {
    const receiver = await OtlpReceiver.start();
    try {
      await exportOneJob({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      });
      expect(receiver.spans.map((s) => s.name)).toContain(SPAN.jobTransition);
      expect(receiver.protobufExports.map((e) => e.path)).toContain('/v1/metrics');
      expect(receiver.protobufExports.map((e) => e.path)).not.toContain('/v1/traces');
    } finally {
      await receiver.close();
    }
  });

  it('exports spans and metrics over gRPC with OTEL_EXPORTER_OTLP_PROTOCOL=grpc', async () => {
    const receiver = await OtlpGrpcReceiver.start();
    try {
      await exportOneJob({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
      expect(new Set(receiver.protobufExports.map((e) => e.path))).toEqual(new Set(['/v1/traces', '/v1/metrics']));
      expectProtobufExports(receiver.protobufExports);
    } finally {
      await receiver.close();
    }
  });

  it.each([
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER=zipkin: this server exports traces with "otlp" only'],
    [{ OTEL_METRICS_EXPORTER: 'prometheus' }, 'OTEL_METRICS_EXPORTER=prometheus: this server exports metrics with "otlp" only'],
    [
      { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'thrift' },
      'OTEL_EXPORTER_OTLP_PROTOCOL=thrift: the OTLP protocols this server exports with are http/protobuf, http/json, grpc',
    ],
  ])('refuses to start with %j, saying what it supports', async (env, problem) => {
    const failure = await ServerProcess.start(env).then(
      (server) => {
        servers.push(server);
        return new Error('the server started');
      },
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
    // ServerProcess's failure quotes all the process printed, on stdout and stderr.
    expect(failure.message).toMatch(/exited with 2 before printing that it listens/);
    expect(failure.message).toContain('invalid telemetry configuration');
    expect(failure.message).toContain(problem);
  });
});
