import {
  Client,
  credentials,
  Metadata,
  status as Code,
  type ChannelCredentials,
  type ServiceError,
  type StatusObject,
} from '@grpc/grpc-js';

/** A request as the fuzzer sends it: the method's path, its messages (several for a client stream), and what it is. */
export interface RawRequest {
  path: string;
  messages: Uint8Array[];
  description: string;
}

/** How a call ended. */
export interface CallOutcome {
  /** The gRPC status code (CANCELLED when the fuzzer cancelled it). */
  code: Code;
  details: string;
  /** Response messages received. */
  messages: number;
  isCancelledByUs: boolean;
}

/** When the fuzzer cancels a stream itself instead of waiting for the server to end it. */
export interface StreamPlan {
  /** Cancel once the first message arrives. */
  cancelOnMessage: boolean;
  /** Cancel after this long without an end (a long poll with nothing to say); absent: wait for the server. */
  quietMs?: number;
}

const toBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes);
const asIs = (bytes: Buffer): Buffer => bytes;

/**
 * A grpc-js client with identity serializers: requests are sent as the
 * bytes given, whether they decode or not, and answers are counted, not
 * decoded. Its receive limit is grpc-js's default (4 MiB), as for any
 * client that did not raise it. Every call carries a deadline, so a call the
 * server never ends shows as DEADLINE_EXCEEDED instead of hanging the test.
 */
export class RawCaller {
  private readonly client: Client;

  /** `metadata` goes with every call (credentials, for instance); plaintext unless `channelCredentials` say otherwise. */
  constructor(
    address: string,
    private readonly metadata = new Metadata(),
    channelCredentials: ChannelCredentials = credentials.createInsecure(),
  ) {
    this.client = new Client(address, channelCredentials);
  }

  unary(path: string, request: Uint8Array, deadlineMs: number): Promise<CallOutcome> {
    return new Promise((resolve) => {
      this.client.makeUnaryRequest(
        path,
        toBuffer,
        asIs,
        request,
        this.metadata.clone(),
        { deadline: Date.now() + deadlineMs },
        (error: ServiceError | null) => {
          resolve({
            code: error?.code ?? Code.OK,
            details: error?.details ?? '',
            messages: error === null ? 1 : 0,
            isCancelledByUs: false,
          });
        },
      );
    });
  }

  serverStream(path: string, request: Uint8Array, deadlineMs: number, plan: StreamPlan): Promise<CallOutcome> {
    const call = this.client.makeServerStreamRequest(path, toBuffer, asIs, request, this.metadata.clone(), {
      deadline: Date.now() + deadlineMs,
    });
    return followStream(call, plan);
  }

  /** Opens a bidirectional stream, writes `requests`, half-closes, and follows the answers. */
  bidiStream(path: string, requests: readonly Uint8Array[], deadlineMs: number, plan: StreamPlan): Promise<CallOutcome> {
    const call = this.client.makeBidiStreamRequest(path, toBuffer, asIs, this.metadata.clone(), { deadline: Date.now() + deadlineMs });
    const outcome = followStream(call, plan);
    for (const request of requests) call.write(request);
    call.end();
    return outcome;
  }

  close(): void {
    this.client.close();
  }
}

/** The events every client stream of grpc-js emits. */
interface StreamCall {
  on(event: 'data', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'status', listener: (status: StatusObject) => void): unknown;
  cancel(): void;
}

function followStream(call: StreamCall, plan: StreamPlan): Promise<CallOutcome> {
  return new Promise((resolve) => {
    let messages = 0;
    let isCancelledByUs = false;
    const cancel = (): void => {
      if (isCancelledByUs) return;
      isCancelledByUs = true;
      call.cancel();
    };
    const quiet = plan.quietMs === undefined ? undefined : setTimeout(cancel, plan.quietMs);
    call.on('data', () => {
      messages += 1;
      if (plan.cancelOnMessage) cancel();
    });
    // The status says it all; an error event without a listener would be thrown.
    call.on('error', () => {});
    call.on('status', (status) => {
      clearTimeout(quiet);
      resolve({ code: status.code, details: status.details, messages, isCancelledByUs });
    });
  });
}
