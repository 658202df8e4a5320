import type { handleBidiStreamingCall } from '@grpc/grpc-js';
import type { Application } from '../../app/application';
import type { BeatMemory } from '../../app/worker-registry';
import { invalidRequest, workerNotFound } from '../../domain/errors';
import type { WorkerState } from '../../domain/worker';
import { WorkerServiceDefinition, type BeatRequest, type BeatResponse } from '../../../gen/ojs/server/v1/worker_service';
import { decoded, gatedMethod, type CallGate } from './call-gate';
import { DirectCall } from './direct-call';
import { fromProtoWorkerState, toProtoWorkerState } from './enum-mapping';
import type { UndecodableRequest } from './guarded-decoding';
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

  readonly handle: handleBidiStreamingCall<BeatRequest | UndecodableRequest, BeatResponse> = (call) => {
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

    const onBeat = async (message: BeatRequest | UndecodableRequest): Promise<void> => {
      const request = decoded(message);
      if (workerId === '') {
        memory = await this.app.workers.startBeats(caller, request.workerId);
        // Cancelled meanwhile: nothing is left to detach a listener attached now.
        if (stream.isEnded) return;
        workerId = request.workerId;
        detach = this.app.streams.attachBeat(workerId, {
          directed: (to) => push(to),
          cancelled: (jobIds) => push(state, { cancelled: jobIds }),
          timedOut: (jobIds) => push(state, { timedOut: jobIds }),
          reclaimed: (jobIds) => push(state, { reclaimed: jobIds }),
          removed: () => stream.fail(workerNotFound(workerId)),
        });
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
    };
    const handle = async (message: BeatRequest | UndecodableRequest): Promise<void> => {
      try {
        await onBeat(message);
        if (!stream.isEnded) call.resume();
      } catch (error) {
        stream.fail(error);
      }
    };
    // The beat being handled: the stream's end waits for it, so that the last beat is answered.
    let handling: Promise<void> = Promise.resolve();
    call.on('data', (message: BeatRequest | UndecodableRequest) => {
      call.pause();
      handling = handle(message);
    });
    call.once('end', () => void handling.then(() => stream.end()));
  };
}
