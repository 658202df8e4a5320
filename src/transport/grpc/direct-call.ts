import type { ServerDuplexStream, ServerWritableStream } from '@grpc/grpc-js';
import { ANONYMOUS, type Principal } from '../../domain/principal';
import type { CallGate, GatedMethod } from './call-gate';
import { gateHeaders, grpcJsStatus } from './grpc-js-status';
import { grpcJsRequestMetadata } from './request-metadata';

type StreamCall<Request, Response> = ServerWritableStream<Request, Response> | ServerDuplexStream<Request, Response>;

/**
 * A call of a method served on grpc-js directly (service-host.ts), taken
 * through the call gate as the middleware takes nice-grpc's calls: it
 * answers with the gate's headers, runs as the principal the gate found,
 * holds its admission until it ends, and ends once, with OK or with the
 * status (and trailers) the gate gives its error. A call the client
 * cancelled sends nothing more.
 */
export class DirectCall<Request, Response> {
  /** Set once the call has ended, however it ended. */
  private isOver = false;
  private release: (() => void) | undefined;
  private cleanup: (() => void) | undefined;
  readonly principal: Principal;

  /**
   * Opens `call`, or refuses it (and returns undefined) when the gate does.
   * `request` is the call's one request, undefined for a streamed one.
   */
  static open<Request, Response>(
    gate: CallGate,
    method: GatedMethod,
    call: StreamCall<Request, Response>,
    request: unknown,
  ): DirectCall<Request, Response> | undefined {
    const metadata = grpcJsRequestMetadata(call.metadata);
    call.sendMetadata(gateHeaders(gate, metadata));
    try {
      const { principal, release } = gate.admit(method, request, metadata, call.getPeer());
      return new DirectCall(gate, method, call, principal ?? ANONYMOUS, release);
    } catch (error) {
      new DirectCall(gate, method, call, ANONYMOUS, undefined).fail(error);
      return undefined;
    }
  }

  private constructor(
    private readonly gate: CallGate,
    private readonly method: GatedMethod,
    private readonly call: StreamCall<Request, Response>,
    principal: Principal,
    release: (() => void) | undefined,
  ) {
    this.principal = principal;
    this.release = release;
    call.once('cancelled', () => this.over());
    // grpc-js ends a call whose stream errs by itself (a response that failed to encode, say).
    call.once('error', () => this.over());
  }

  /** Runs `cleanup` when the call ends, however it ends (at once if it has). */
  onEnd(cleanup: () => void): void {
    if (this.isOver) cleanup();
    else this.cleanup = cleanup;
  }

  /** True once the call has ended (answered, failed, or cancelled by the client). */
  get isEnded(): boolean {
    return this.isOver;
  }

  /** Sends `message`; false when the client is not keeping up and the call's buffer is full (wait for drained()). */
  write(message: Response): boolean {
    return this.isOver ? true : this.call.write(message);
  }

  /** Resolves when the buffered messages have gone out, or the call has ended. */
  drained(): Promise<void> {
    if (this.isOver) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.call.off('drain', done);
        this.call.off('cancelled', done);
        resolve();
      };
      this.call.once('drain', done);
      this.call.once('cancelled', done);
    });
  }

  /** Ends the call with OK, after what was written. */
  end(): void {
    if (this.over()) this.call.end();
  }

  /** Ends the call with the status the gate gives `error`. */
  fail(error: unknown): void {
    if (!this.over()) return;
    // grpc-js's stream turns an emitted error into the status it ends with.
    this.call.emit('error', grpcJsStatus(this.gate.failure(error, this.method.path)));
  }

  /** Marks the call ended; false when it already was. */
  private over(): boolean {
    if (this.isOver) return false;
    this.isOver = true;
    this.release?.();
    this.release = undefined;
    this.cleanup?.();
    this.cleanup = undefined;
    return true;
  }
}
