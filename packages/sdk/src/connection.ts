import { ChannelCredentials, createChannel, createClientFactory, type Channel } from 'nice-grpc';
import { errorDetailsClientMiddleware } from 'nice-grpc-error-details';
import { bearerToken } from './channel-security';
import { JobServiceDefinition, type JobServiceClient } from '../gen/ojs/server/v1/job_service';
import { ScheduleServiceDefinition, type ScheduleServiceClient } from '../gen/ojs/server/v1/schedule_service';
import { WorkerServiceDefinition, type WorkerServiceClient } from '../gen/ojs/server/v1/worker_service';
import { WorkflowServiceDefinition, type WorkflowServiceClient } from '../gen/ojs/server/v1/workflow_service';
import { WorkerStreamClient } from './worker-stream-client';

/** One HTTP/2 connection to the server and the clients the SDK uses over it. */
export interface Connection {
  readonly channel: Channel;
  readonly workers: WorkerServiceClient;
  /** The worker's Beat and Fetch streams, on the same channel (worker-stream-client.ts says why apart). */
  readonly workerStreams: WorkerStreamClient;
  readonly jobs: JobServiceClient;
  readonly schedules: ScheduleServiceClient;
  readonly workflows: WorkflowServiceClient;
  close(): void;
}

export interface ConnectionOptions {
  /** host:port of the server (or of a load balancer in front of the replicas). */
  address: string;
  /** TLS credentials; plaintext by default. */
  credentials?: ChannelCredentials;
  /** A bearer token sent with every call (channel-security.ts decides whether it may go). */
  token?: string | undefined;
}

/** Refusals arrive with the server's ErrorInfo, whose reason tells a full store from a too-large request. */
const clients = createClientFactory().use(errorDetailsClientMiddleware);

/**
 * Opens a channel. It connects lazily and reconnects by itself; the keepalive
 * pings let either side notice a dead peer on an idle connection.
 */
export function connect(options: ConnectionOptions): Connection {
  const channel = createChannel(options.address, options.credentials ?? ChannelCredentials.createInsecure(), {
    'grpc.keepalive_time_ms': 20_000,
    'grpc.keepalive_timeout_ms': 10_000,
    'grpc.keepalive_permit_without_calls': 1,
  });
  const factory = options.token === undefined ? clients : clients.use(bearerToken(options.token));
  return {
    channel,
    workers: factory.create(WorkerServiceDefinition, channel),
    workerStreams: new WorkerStreamClient(channel, options.token),
    jobs: factory.create(JobServiceDefinition, channel),
    schedules: factory.create(ScheduleServiceDefinition, channel),
    workflows: factory.create(WorkflowServiceDefinition, channel),
    close: () => channel.close(),
  };
}
