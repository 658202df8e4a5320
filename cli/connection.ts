import { readFileSync } from 'node:fs';
import { ChannelCredentials, createChannel, createClientFactory, Metadata, type Channel } from 'nice-grpc';
import { errorDetailsClientMiddleware } from 'nice-grpc-error-details';
import { JobServiceDefinition } from '../gen/ojs/server/v1/job_service';
import { OperatorServiceDefinition } from '../gen/ojs/server/v1/operator_service';
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
}

/** The clients a command uses, over one channel that close() ends. */
export interface Connection {
  readonly jobs: ReturnType<typeof createJobClient>;
  readonly operator: ReturnType<typeof createOperatorClient>;
  close(): void;
}

const baseFactory = createClientFactory().use(errorDetailsClientMiddleware);
type ClientFactory = typeof baseFactory;

const createJobClient = (factory: ClientFactory, channel: Channel) => factory.create(JobServiceDefinition, channel);
const createOperatorClient = (factory: ClientFactory, channel: Channel) => factory.create(OperatorServiceDefinition, channel);

/**
 * Opens a channel to the server. The token travels as call metadata through
 * a client middleware rather than as call credentials, which grpc-js refuses
 * on a plaintext channel (loopback, or a mesh that encrypts the hop).
 */
export function connect(options: ConnectionOptions): Connection {
  const credentials = channelCredentials(options);
  const { token } = options;
  if (token !== undefined && credentials === undefined && !isLoopback(options.server) && options.allowPlaintextToken !== true) {
    throw usageError(
      `refusing to send a token in plaintext to ${options.server}: anyone on the path could read it. ` +
        'Use TLS (--tls or --tls-ca), or --allow-plaintext-token when a service mesh encrypts the connection',
    );
  }
  const channel = createChannel(options.server, credentials ?? ChannelCredentials.createInsecure());
  const factory =
    token === undefined
      ? baseFactory
      : baseFactory.use((call, context) =>
          call.next(call.request, { ...context, metadata: Metadata(context.metadata).set('authorization', `Bearer ${token}`) }),
        );
  return {
    jobs: createJobClient(factory, channel),
    operator: createOperatorClient(factory, channel),
    close: () => channel.close(),
  };
}

/** TLS credentials when any TLS option is given; undefined for plaintext. */
function channelCredentials(options: ConnectionOptions): ChannelCredentials | undefined {
  const { tlsCa, tlsCert, tlsKey } = options;
  if (options.tls !== true && tlsCa === undefined && tlsCert === undefined && tlsKey === undefined) return undefined;
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw usageError('--tls-cert and --tls-key go together');
  return ChannelCredentials.createSsl(
    tlsCa === undefined ? null : readPem('--tls-ca', tlsCa),
    tlsKey === undefined ? null : readPem('--tls-key', tlsKey),
    tlsCert === undefined ? null : readPem('--tls-cert', tlsCert),
  );
}

function readPem(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw usageError(`${flag} ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Whether `address` (host:port) names this machine, where plaintext never leaves it. */
function isLoopback(address: string): boolean {
  const host = address.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
