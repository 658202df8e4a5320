import type { handleBidiStreamingCall } from '@grpc/grpc-js';
import type { Application } from '../../app/application';
import type { BeatMemory } from '../../app/worker-registry';
import { invalidRequest, workerNotFound } from '../../domain/errors';
import type { WorkerState } from '../../domain/worker';
import { BeatResponse, WorkerServiceDefinition, type BeatRequest } from '../../../gen/ojs/server/v1/worker_service';
import { decoded, gatedMethod, type CallGate } from './call-gate';
import { DirectCall } from './direct-call';
import { serializeComplete } from './encoded-messages';
import { fromProtoWorkerState, toProtoWorkerState } from './enum-mapping';
import type { UndecodableRequest } from './guarded-decoding';
import type { DirectMethod } from './service-host';
import { shuttingDown } from './shutting-down';

const BEAT = gatedMethod(WorkerServiceDefinition, WorkerServiceDefinition.methods.beat);

/** What a push carries besides the worker's state. */
interface PushedJobs {
  cancelled?: string[];
  timedOut?: string[];
  reclaimed?: string[];
}

/**
 * The Beat streams of WorkerService, served on grpc-js directly (a replica
 * holds one per worker; service-host.ts). A stream answers every beat, and
 * pushes directives, cancellations, timeouts and keepalives in between. It
 * is bound to the worker of its first message, which must be the caller's:
 * it is checked before the stream hears any push for it. Beats are taken
 * one at a time, in order; the stream reads no further while one is
 * handled (HTTP/2 flow control holds back a client that beats faster).
 */
export class BeatStreams {
  private readonly open = new Set<DirectCall<BeatRequest | UndecodableRequest, BeatResponse>>();
  /** Set by endAll: a stream admitted just before shutdown ends at once. */
  private isEnded = false;

  constructor(
    private readonly app: Application,
    private readonly gate: CallGate,
  ) {}

  /** Ends every open stream with UNAVAILABLE so that workers reconnect to another replica. */
  endAll(): void {
    this.isEnded = true;
    for (const stream of this.open) stream.fail(shuttingDown());
  }

  /** Beat as the service host serves it. */
  readonly method: DirectMethod = {
    handler: (call: Parameters<handleBidiStreamingCall<BeatRequest | UndecodableRequest, BeatResponse>>[0]) => this.handle(call),
    serializeResponse: (message: BeatResponse) => serializeComplete(BeatResponse, message),
  };

  private readonly handle: handleBidiStreamingCall<BeatRequest | UndecodableRequest, BeatResponse> = (call) => {
    const stream = DirectCall.open(this.gate, BEAT, call, undefined);
    if (stream === undefined) return;
    if (this.isEnded) return stream.fail(shuttingDown());
    const caller = stream.principal;
    let workerId = '';
    let state: WorkerState = 'running';
    let memory: BeatMemory = {};
    let detach: (() => void) | undefined;
    const push = (to: WorkerState, jobs: PushedJobs = {}, inReplyTo = 0): void => {
      state = to;
      stream.write({
        state: toProtoWorkerState(to),
        serverTime: new Date(this.app.context.clock.now()),
        cancelledJobIds: jobs.cancelled ?? [],
        timedOutJobIds: jobs.timedOut ?? [],
        reclaimedJobIds: jobs.reclaimed ?? [],
        inReplyTo,
      });
      // Beats are answered every heartbeat interval: a keepalive goes only after an interval with nothing sent.
      keepalive.refresh();
    };
    const keepalive = setInterval(() => {
      if (workerId !== '') push(state);
    }, this.app.context.settings.streamKeepaliveMs);
    this.open.add(stream);
    stream.onEnd(() => {
      clearInterval(keepalive);
      detach?.();
      this.open.delete(stream);
    });

    // Binds the stream to its first beat's worker, once that is found to be the caller's; false if the stream ended meanwhile.
    const bind = async (request: BeatRequest): Promise<boolean> => {
      memory = await this.app.workers.startBeats(caller, request.workerId);
      // Cancelled meanwhile: nothing is left to detach a listener attached now.
      if (stream.isEnded) return false;
      workerId = request.workerId;
      detach = this.app.streams.attachBeat(workerId, {
        directed: (to) => push(to),
        cancelled: (jobIds) => push(state, { cancelled: jobIds }),
        timedOut: (jobIds) => push(state, { timedOut: jobIds }),
        reclaimed: (jobIds) => push(state, { reclaimed: jobIds }),
        removed: () => stream.fail(workerNotFound(workerId)),
      });
      return true;
    };
    // Answers one beat, then reads the next; a beat that fails ends the stream with its error.
    const onBeat = async (message: BeatRequest | UndecodableRequest): Promise<void> => {
      try {
        const request = decoded(message);
        if (workerId === '') {
          if (!(await bind(request))) return;
        } else if (request.workerId !== workerId) {
          throw invalidRequest('worker_id', 'must be the same on every message of a Beat stream');
        }
        const beatState = fromProtoWorkerState(request.state);
        if (beatState === undefined) throw invalidRequest('state', 'must be RUNNING, QUIET or TERMINATE');
        const outcome = await this.app.workers.beat(
          caller,
          { workerId, state: beatState, sequence: request.sequence, activeJobIds: request.activeJobIds },
          memory,
        );
        push(
          outcome.desiredState,
          { cancelled: outcome.cancelledJobIds, timedOut: outcome.timedOutJobIds, reclaimed: outcome.reclaimedJobIds },
          request.sequence,
        );
        if (!stream.isEnded) call.resume();
      } catch (error) {
        stream.fail(error);
      }
    };
    // The stream's end waits for the beat being handled, so that the last beat is answered. Two flags, not
    // the beat's promise: kept until the next beat, 5 s later, it would outlive the young generation, to be
    // collected with the whole heap.
    let isHandling = false;
    let hasClientEnded = false;
    const handled = (): void => {
      isHandling = false;
      if (hasClientEnded) stream.end();
    };
    call.on('data', (message: BeatRequest | UndecodableRequest) => {
      call.pause();
      isHandling = true;
      void onBeat(message).then(handled);
    });
    call.once('end', () => {
      hasClientEnded = true;
      if (!isHandling) stream.end();
    });
  };
}
