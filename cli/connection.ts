import { createChannel, createClientFactory, type Channel, type ClientMiddleware } from 'nice-grpc';
import { deadlineMiddleware, type DeadlineOptions } from 'nice-grpc-client-middleware-deadline';
import { errorDetailsClientMiddleware } from 'nice-grpc-error-details';
import { JobServiceDefinition } from '../gen/ojs/server/v1/job_service';
import { OperatorServiceDefinition } from '../gen/ojs/server/v1/operator_service';
import { ScheduleServiceDefinition } from '../gen/ojs/server/v1/schedule_service';
import { WorkflowServiceDefinition } from '../gen/ojs/server/v1/workflow_service';
import { parseDuration } from '../lib/duration';
import { bearerToken, resolveChannelSecurity, type ChannelSecurity, type SecurityOptions } from '../packages/sdk/src';
import { usageError } from './exit-codes';

/** How to reach the server: the global flags, each with its environment variable (program.ts). */
export interface ConnectionOptions {
  server: string;
  /** TLS trusting the system's roots (implied by any of the files below). */
  tls?: boolean;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  token?: string;
  allowPlaintextToken?: boolean;
  /** How long one unary call may take, as a duration ("30s"). */
  callTimeout: string;
}

/** The clients a command uses, over one channel that close() ends. */
export interface Connection {
  readonly jobs: ReturnType<typeof createJobClient>;
  readonly operator: ReturnType<typeof createOperatorClient>;
  readonly schedules: ReturnType<typeof createScheduleClient>;
  readonly workflows: ReturnType<typeof createWorkflowClient>;
  /** The deadline of a unary call (--call-timeout): what a long call (jobs wait) allows on top of its own wait. */
  readonly callTimeoutMs: number;
  close(): void;
}

// The last middleware attached runs first: the token and the default deadline are set before the deadline is enforced.
const baseFactory = createClientFactory().use(errorDetailsClientMiddleware).use(deadlineMiddleware);
type ClientFactory = typeof baseFactory;

const createJobClient = (factory: ClientFactory, channel: Channel) => factory.create(JobServiceDefinition, channel);
const createOperatorClient = (factory: ClientFactory, channel: Channel) => factory.create(OperatorServiceDefinition, channel);
const createScheduleClient = (factory: ClientFactory, channel: Channel) => factory.create(ScheduleServiceDefinition, channel);
const createWorkflowClient = (factory: ClientFactory, channel: Channel) => factory.create(WorkflowServiceDefinition, channel);

/**
 * A deadline of `ms` on every unary call that brings none of its own, so
 * that a server which takes the connection but never answers cannot hang
 * the command. Streams (events tail) run as long as they are wanted.
 */
function unaryDeadline(ms: number): ClientMiddleware<DeadlineOptions> {
  return (call, options) =>
    call.next(
      call.request,
      call.requestStream || call.responseStream || options.deadline !== undefined ? options : { ...options, deadline: ms },
    );
}

/**
 * Opens a channel to the server. TLS and the token are decided by the SDK
 * (resolveChannelSecurity), so that the command and the SDK read the same
 * settings alike and refuse a plaintext token beyond this machine alike.
 */
export function connect(options: ConnectionOptions): Connection {
  const callTimeoutMs = parseDuration(options.callTimeout);
  if (callTimeoutMs === undefined || callTimeoutMs <= 0)
    throw usageError(`--call-timeout: "${options.callTimeout}" is not a duration such as 30s or 2m`);
  const { credentials, token } = channelSecurity(options);
  const channel = createChannel(options.server, credentials);
  const timed = baseFactory.use(unaryDeadline(callTimeoutMs));
  const factory = token === undefined ? timed : timed.use(bearerToken(token));
  return {
    jobs: createJobClient(factory, channel),
    operator: createOperatorClient(factory, channel),
    schedules: createScheduleClient(factory, channel),
    workflows: createWorkflowClient(factory, channel),
    callTimeoutMs,
    close: () => channel.close(),
  };
}

/**
 * The flags as the SDK's security options. Flags left out fall back on the
 * environment there, as in the SDK (OJS_TLS, OJS_ALLOW_PLAINTEXT_TOKEN
 * besides the variables commander reads). What the SDK refuses (a file it
 * cannot read, a certificate without its key, a plaintext token) is a
 * usage error.
 */
function channelSecurity(options: ConnectionOptions): ChannelSecurity {
  const { tlsCa, tlsCert, tlsKey } = options;
  const hasTlsFiles = tlsCa !== undefined || tlsCert !== undefined || tlsKey !== undefined;
  const security: SecurityOptions = {
    tls: hasTlsFiles ? { ca: tlsCa, cert: tlsCert, key: tlsKey } : options.tls,
    token: options.token,
    allowPlaintextToken: options.allowPlaintextToken,
  };
  try {
    return resolveChannelSecurity(options.server, security);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw usageError(`${message} (flags: --tls, --tls-ca, --tls-cert, --tls-key, --allow-plaintext-token)`);
  }
}
