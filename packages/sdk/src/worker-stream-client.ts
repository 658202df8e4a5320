import { ChannelCredentials, Client, Metadata, type Channel, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { ClientError, Status } from 'nice-grpc';
import { BeatRequest, BeatResponse, FetchRequest, FetchResponse, WorkerServiceDefinition } from '../gen/ojs/server/v1/worker_service';
import { bearerAuthorization } from './channel-security';

/**
 * How a stream ended: undefined when the server ended it with OK; else its
 * status, as nice-grpc's clients throw it; or what a handler of its messages
 * threw (the stream is then cancelled).
 */
export type StreamEnd = ClientError | Error | undefined;

/** An open stream: its end, told once the server's last message was handed on. */
export interface StreamCall {
  readonly ended: Promise<StreamEnd>;
  cancel(): void;
}

/** An open Beat stream: beats go out as they are written. */
export interface BeatCall extends StreamCall {
  write(request: BeatRequest): void;
}

type MethodName = keyof typeof WorkerServiceDefinition.methods;
const pathOf = (method: MethodName): string => `/${WorkerServiceDefinition.fullName}/${WorkerServiceDefinition.methods[method].name}`;
const BEAT = pathOf('beat');
const FETCH = pathOf('fetch');

const encodeBeat = (request: BeatRequest): Buffer => Buffer.from(BeatRequest.encode(request).finish());
const encodeFetch = (request: FetchRequest): Buffer => Buffer.from(FetchRequest.encode(request).finish());
const decodeBeat = (bytes: Buffer): BeatResponse => BeatResponse.decode(bytes);
const decodeFetch = (bytes: Buffer): FetchResponse => FetchResponse.decode(bytes);

/**
 * The worker's two long-lived streams (Beat and Fetch), on grpc-js directly
 * rather than through nice-grpc's async iterators: each wait of an iterator
 * (seconds, between beats or deliveries) holds a promise and its reactions,
 * which outlive the young generation and are collected only with the whole
 * heap, beat after beat and worker after worker. Here a stream holds its
 * callbacks and nothing per wait. The calls go over the connection's
 * channel with the metadata its other calls carry (the bearer token).
 */
export class WorkerStreamClient {
  private readonly client: Client;

  constructor(
    channel: Channel,
    private readonly token: string | undefined,
  ) {
    // The channel carries its own target and credentials: grpc-js reads neither of these when given one.
    this.client = new Client(channel.getTarget(), ChannelCredentials.createInsecure(), { channelOverride: channel });
  }

  /** Opens a Beat stream; `onMessage` hears each answer and push. */
  beat(onMessage: (response: BeatResponse) => void): BeatCall {
    const call = this.client.makeBidiStreamRequest(BEAT, encodeBeat, decodeBeat, this.metadata());
    return {
      ended: listen(call, BEAT, onMessage),
      write: (request) => void call.write(request),
      cancel: () => call.cancel(),
    };
  }

  /** Opens a Fetch stream; `onMessage` hears each delivery and keepalive. */
  fetch(request: FetchRequest, onMessage: (response: FetchResponse) => void): StreamCall {
    const call = this.client.makeServerStreamRequest(FETCH, encodeFetch, decodeFetch, request, this.metadata());
    return { ended: listen(call, FETCH, onMessage), cancel: () => call.cancel() };
  }

  private metadata(): Metadata {
    const metadata = new Metadata();
    if (this.token !== undefined) metadata.set('authorization', bearerAuthorization(this.token));
    return metadata;
  }
}

/** nice-grpc's Status of a grpc-js status code: the same numbers, two enums. */
const STATUSES = new Map<number, Status>(
  Object.values(Status)
    .filter((value): value is Status => typeof value === 'number')
    .map((value) => [value, value]),
);

/**
 * Passes a call's messages to `onMessage`, and resolves with its end.
 * grpc-js reports a failed call with 'error' (its status as a
 * ServiceError), and every call with 'status'; messages still buffered
 * then come before the readable side's 'end', so the end waits for both. A
 * message whose handler throws cancels the call, which then ends with what
 * the handler threw.
 */
function listen<Message>(call: ClientReadableStream<Message>, path: string, onMessage: (message: Message) => void): Promise<StreamEnd> {
  return new Promise((resolve) => {
    let failure: Partial<ServiceError> | undefined;
    let handlerFailure: Error | undefined;
    let end: StreamEnd | 'open' = 'open';
    let isDrained = false;
    const tellEnd = (): void => {
      if (end !== 'open' && isDrained) resolve(end);
    };
    call.on('data', (message: Message) => {
      if (handlerFailure !== undefined) return;
      try {
        onMessage(message);
      } catch (error) {
        handlerFailure = error instanceof Error ? error : new Error(String(error));
        call.cancel();
      }
    });
    call.on('error', (error: Partial<ServiceError>) => (failure ??= error));
    call.once('status', () => {
      const code = STATUSES.get(failure?.code ?? Status.UNKNOWN) ?? Status.UNKNOWN;
      end = handlerFailure ?? (failure === undefined ? undefined : new ClientError(path, code, failure.details ?? String(failure.message)));
      tellEnd();
    });
    call.once('end', () => {
      isDrained = true;
      tellEnd();
    });
  });
}
