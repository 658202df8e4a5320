import { AggregationTemporality, MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ChannelCredentials, createChannel, createClientFactory, Metadata, type Channel } from 'nice-grpc';
import { errorDetailsClientMiddleware } from 'nice-grpc-error-details';
import { HealthDefinition } from 'nice-grpc-server-health';
import type { ProtocolSettings } from '../../src/app/app-context';
import type { ConnectionPolicy } from '../../lib/connection-policy';
import type { Clock } from '../../src/domain/clock';
import { DEFAULT_PAYLOAD_LIMITS, type PayloadLimits } from '../../src/domain/limits';
import type { PrincipalLimits } from '../../src/domain/principal-limits';
import { DEFAULT_EVENT_RETENTION, DEFAULT_RETENTION, type EventRetention, type RetentionPolicy } from '../../src/domain/retention';
import { systemClock } from '../../src/domain/clock';
import { loadDescriptorSet } from '../../src/descriptor-set';
import { startServer, type RunningServer } from '../../src/server';
import type { MaintenanceIntervals } from '../../src/background/maintenance';
import type { JobStore } from '../../src/store/job-store';
import { MemoryJobStore } from '../../src/store/memory/memory-job-store';
import { RedisJobStore } from '../../src/store/redis/redis-job-store';
import type { SecurityOptions } from '../../src/transport/grpc/server-security';
import { testPrefix } from '../../tools/redis-server';
import { JobServiceDefinition } from '../../gen/ojs/server/v1/job_service';
import { OperatorServiceDefinition } from '../../gen/ojs/server/v1/operator_service';
import { ScheduleServiceDefinition } from '../../gen/ojs/server/v1/schedule_service';
import { WorkerServiceDefinition } from '../../gen/ojs/server/v1/worker_service';
import { WorkflowServiceDefinition } from '../../gen/ojs/server/v1/workflow_service';
import { fixedJitterEntropy } from './fixed-entropy';
import { RecordingLogger } from './silent-logger';
import { TEST_PROTOCOL } from './test-protocol';
import { auditThenStop } from './store-audit';

export interface TestServerOptions {
  clock?: Clock;
  protocol?: Partial<ProtocolSettings>;
  /** Run the background loops on timers (default: no; tests call runMaintenance()). */
  runMaintenance?: boolean;
  /** The background loops' intervals; default: 20 ms each. */
  maintenance?: MaintenanceIntervals;
  /** The store to serve; by default the backend this test project runs on (see jest.config.js). */
  store?: () => Promise<JobStore>;
  retention?: RetentionPolicy;
  /** The event log's retention, for the default store (a store given by `store` has its own). */
  events?: EventRetention;
  limits?: PayloadLimits;
  /** A fixed port (to restart a server where its clients expect it); default: any free one. */
  port?: number;
  /** TLS and the auth file; default: plaintext, every caller ANONYMOUS. */
  security?: SecurityOptions;
  /** Serve the web dashboard on this port (0: a free one); default: no dashboard. */
  dashboardPort?: number;
  /** Connection rules (age, pings, streams per connection); default: the server's defaults. */
  connections?: ConnectionPolicy;
  /** What one principal may hold and how fast it may enqueue; default: the server's defaults. */
  principalLimits?: PrincipalLimits;
  /** Serve health only on a second, plaintext port (0: a free one); default: none. */
  healthPort?: number;
}

/** The store of the project's backend: in-memory, or Redis with a key prefix of its own. */
export function defaultTestStore(events: EventRetention = DEFAULT_EVENT_RETENTION): Promise<JobStore> {
  if (process.env['OJS_TEST_BACKEND'] !== 'redis') return Promise.resolve(new MemoryJobStore({ events }));
  return RedisJobStore.connect({ url: process.env['OJS_TEST_REDIS_URL']!, prefix: testPrefix(), events });
}

export { TEST_PROTOCOL };

const clientFactory = createClientFactory().use(errorDetailsClientMiddleware);

/** A real server on 127.0.0.1 with an ephemeral port, its clients, and its recorded spans. */
export class TestServer {
  private channels: Channel[] = [];

  private constructor(
    readonly server: RunningServer,
    private readonly store: JobStore,
    readonly spans: InMemorySpanExporter,
    readonly metrics: CollectingMetricReader,
    readonly logger: RecordingLogger,
  ) {}

  static async start(options: TestServerOptions = {}): Promise<TestServer> {
    const spans = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    const metrics = new CollectingMetricReader();
    const logger = new RecordingLogger();
    const store = await (options.store ?? (() => defaultTestStore(options.events)))();
    const server = await startServer({
      host: '127.0.0.1',
      port: options.port ?? 0,
      store,
      clock: options.clock ?? systemClock,
      entropy: fixedJitterEntropy,
      tracer: provider.getTracer('test'),
      meter: new MeterProvider({ readers: [metrics] }).getMeter('test'),
      logger,
      protocol: { ...TEST_PROTOCOL, ...options.protocol },
      service: 'test',
      limits: options.limits ?? DEFAULT_PAYLOAD_LIMITS,
      retention: options.retention ?? DEFAULT_RETENTION,
      maintenance: options.maintenance ?? { promoteIntervalMs: 20, reapIntervalMs: 20 },
      descriptorSet: loadDescriptorSet(),
      serverVersion: 'test',
      runMaintenance: options.runMaintenance ?? false,
      security: options.security,
      connections: options.connections,
      principalLimits: options.principalLimits,
      healthPort: options.healthPort,
      dashboardPort: options.dashboardPort,
    });
    return new TestServer(auditedOnFirstStop(server, store), store, spans, metrics, logger);
  }

  get address(): string {
    return `127.0.0.1:${this.server.port}`;
  }

  /** A fresh channel (one HTTP/2 connection) with clients for every service; closed by stop(). */
  connect(options: ConnectOptions = {}): Clients {
    const clients = connectTo(this.address, options);
    this.channels.push(clients.channel);
    return clients;
  }

  /** Every broken invariant of the store's data (JobStore.audit); stop() checks it too. */
  audit(): Promise<string[]> {
    return this.store.audit();
  }

  /** Runs every background task once, as the loops would. */
  runMaintenance(): Promise<void> {
    return this.server.maintenance.runOnce();
  }

  /**
   * Stops the server. The first stop audits its store first, while the
   * server is still live, and fails (after stopping) with every broken
   * invariant the audit reports.
   */
  async stop(): Promise<void> {
    for (const channel of this.channels) channel.close();
    await this.server.stop(1_000);
  }
}

/**
 * The server, made to audit `store` before it first stops, whoever stops it
 * (TestServer.stop(), or a test calling `server.stop()` itself): one audit
 * per server, after everything the test did.
 */
function auditedOnFirstStop(server: RunningServer, store: JobStore): RunningServer {
  let isAudited = false;
  return {
    ...server,
    stop(timeoutMs: number): Promise<void> {
      if (isAudited) return server.stop(timeoutMs);
      isAudited = true;
      return auditThenStop(
        'the test server',
        () => store.audit(),
        () => server.stop(timeoutMs),
      );
    },
  };
}

export interface ConnectOptions {
  /** TLS credentials; default: plaintext. */
  credentials?: ChannelCredentials;
  /** A bearer token sent with every call. */
  token?: string;
  /**
   * A connection of its own: grpc-js otherwise shares one connection among
   * the channels of a process that have the same address and options.
   */
  isOwnConnection?: boolean;
}

/** Clients for every service over a fresh channel (one HTTP/2 connection) to `address`. */
export function connectTo(address: string, options: ConnectOptions = {}) {
  const channel = createChannel(
    address,
    options.credentials ?? ChannelCredentials.createInsecure(),
    options.isOwnConnection === true ? { 'grpc.use_local_subchannel_pool': 1 } : {},
  );
  const factory =
    options.token === undefined
      ? clientFactory
      : clientFactory.use((call, context) => {
          const metadata = Metadata(context.metadata).set('authorization', `Bearer ${options.token}`);
          return call.next(call.request, { ...context, metadata });
        });
  return {
    channel,
    workers: factory.create(WorkerServiceDefinition, channel),
    jobs: factory.create(JobServiceDefinition, channel),
    operator: factory.create(OperatorServiceDefinition, channel),
    schedules: factory.create(ScheduleServiceDefinition, channel),
    workflows: factory.create(WorkflowServiceDefinition, channel),
    health: factory.create(HealthDefinition, channel),
  };
}

export type Clients = ReturnType<typeof connectTo>;

/** A metric reader that collects when a test asks (cumulative: every value since start). */
export class CollectingMetricReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }

  /** The data points of one metric, with their attributes. */
  async points(name: string): Promise<{ attributes: Record<string, unknown>; value: unknown }[]> {
    const { resourceMetrics } = await this.collect();
    return metricsNamed(resourceMetrics, name);
  }

  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

function metricsNamed(resourceMetrics: ResourceMetrics, name: string) {
  return resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === name)
    .flatMap((metric) => metric.dataPoints.map((point) => ({ attributes: { ...point.attributes }, value: point.value })));
}
