import { assertField, eventsPruned, invalidRequest, OjsError } from '../domain/errors';
import { EVENT_TYPES, eventsOf, heartbeatEvents, LIVE_ONLY_EVENT_TYPES, parseEventId, type LifecycleEvent } from '../domain/event-catalog';
import { compareCursors, cursorBefore, type RecordedFact } from '../domain/event-facts';
import { jobIdProblem, jobTypeProblem, queueNameProblem } from '../domain/identifiers';
import { MAX_QUEUES_PER_WORKER } from '../domain/limits';
import { mayUseQueue, type Principal } from '../domain/principal';
import { AsyncQueue } from '../../lib/async-queue';
import type { AppContext } from './app-context';
import { assertMayUseQueue, isUnscoped } from './caller-scope';

/** An open watch: the events as they come (ending with an error when the watcher falls too far behind), and how to stop. */
export interface EventStream {
  events: AsyncIterable<LifecycleEvent>;
  close(): void;
}

/** What a watcher asks for, as the request spells it. */
export interface WatchRequest {
  /** Event types, or families of them ("job.*"); empty: every stored type. */
  types: readonly string[];
  queues: readonly string[];
  jobTypes: readonly string[];
  jobIds: readonly string[];
  /** Resume after this event id; empty: from now on. */
  after: string;
  includeHeartbeats: boolean;
}

/** Most of each filter list a watcher may send. */
const MAX_FILTER_ENTRIES = MAX_QUEUES_PER_WORKER;
/**
 * Most events waiting for a slow watcher. Beyond it the stream ends
 * (RESOURCE_EXHAUSTED, saying where to resume): a watcher that cannot keep
 * up must not make the server hold the log in memory for it.
 */
const MAX_UNSENT_EVENTS = 10_000;

/**
 * The lifecycle events of every replica, for WatchEvents streams. Events
 * are read from the store's log (facts recorded with the changes they
 * describe): a watcher that resumes after an event id gets every event
 * after it, none twice, on any replica; heartbeats come live only.
 */
export class EventFeed {
  constructor(private readonly ctx: AppContext) {}

  /**
   * Starts watching: checks the request and the resume point (refusing one
   * the log no longer reaches) and starts following the log, so that the
   * stream holds every event `request` selects from then on, until closed.
   * A queue-scoped caller names only its queues and sees only the events of
   * its queues' jobs and queues (worker events, which belong to no one
   * queue, are for unscoped callers).
   */
  async open(caller: Principal, request: WatchRequest): Promise<EventStream> {
    const selected = eventFilter(request);
    request.queues.forEach((queue, i) => assertMayUseQueue(caller, `queues[${i}]`, queue));
    const passes = isUnscoped(caller)
      ? selected
      : (event: LifecycleEvent): boolean => event.queue !== undefined && mayUseQueue(caller, event.queue) && selected(event);
    const resume = request.after === '' ? undefined : resumePoint(request.after);
    if (resume !== undefined) await this.assertRetained(request.after, resume.cursor);
    const outbox = new AsyncQueue<LifecycleEvent>();
    const deliver = (events: readonly LifecycleEvent[]): void => {
      for (const event of events) if (passes(event)) outbox.push(event);
      if (outbox.size > MAX_UNSENT_EVENTS) outbox.fail(tooSlow());
    };
    const stopFollowing = await this.ctx.store.followFacts(resume?.before, (facts) =>
      deliver(facts.flatMap((fact) => this.eventsAfter(fact, resume))),
    );
    let stopHeartbeats: (() => void) | undefined;
    try {
      if (request.includeHeartbeats) {
        stopHeartbeats = await this.ctx.store.followHeartbeats((notice) => deliver(heartbeatEvents(notice, this.ctx.service)));
      }
    } catch (error) {
      stopFollowing();
      throw error;
    }
    return {
      events: outbox,
      close: () => {
        stopFollowing();
        stopHeartbeats?.();
        outbox.end();
      },
    };
  }

  /** The events of a fact, without those at or before the resume point. */
  private eventsAfter(recorded: RecordedFact, resume: ResumePoint | undefined): LifecycleEvent[] {
    const events = eventsOf(recorded, this.ctx.service);
    return resume !== undefined && recorded.cursor === resume.cursor ? events.slice(resume.n + 1) : events;
  }

  /** Refuses a resume point the log no longer reaches: what came after it cannot all be told. */
  private async assertRetained(after: string, cursor: string): Promise<void> {
    const { oldest } = await this.ctx.store.readFacts({ limit: 0 });
    if (oldest === undefined || compareCursors(cursor, oldest) < 0) throw eventsPruned(after, oldest);
  }
}

interface ResumePoint {
  /** The fact the resume event came from, and its index among that fact's events. */
  cursor: string;
  n: number;
  /** A cursor just before `cursor`, so that following starts with that fact (its later events are still owed). */
  before: string;
}

function resumePoint(after: string): ResumePoint {
  const parsed = parseEventId(after);
  if (parsed === undefined) throw invalidRequest('after', 'is not the id of an event this server sent');
  return { ...parsed, before: cursorBefore(parsed.cursor) };
}

/** Whether an event passes a watcher's filter; refuses filters that name nothing the server emits. */
function eventFilter(request: WatchRequest): (event: LifecycleEvent) => boolean {
  for (const [field, values] of [
    ['types', request.types],
    ['queues', request.queues],
    ['job_types', request.jobTypes],
    ['job_ids', request.jobIds],
  ] as const) {
    if (values.length > MAX_FILTER_ENTRIES) throw invalidRequest(field, `must list at most ${MAX_FILTER_ENTRIES} entries`);
  }
  const known: readonly string[] = EVENT_TYPES;
  const liveOnly: readonly string[] = LIVE_ONLY_EVENT_TYPES;
  request.types.forEach((type, i) => {
    const isFamily = type.endsWith('.*') && known.some((t) => t.startsWith(type.slice(0, -1)));
    if (!known.includes(type) && !isFamily)
      throw invalidRequest(`types[${i}]`, `must be one of ${EVENT_TYPES.join(', ')}, or a family such as "job.*"`);
  });
  request.queues.forEach((queue, i) => assertField(`queues[${i}]`, queueNameProblem(queue)));
  request.jobTypes.forEach((type, i) => assertField(`job_types[${i}]`, jobTypeProblem(type)));
  request.jobIds.forEach((id, i) => assertField(`job_ids[${i}]`, jobIdProblem(id)));
  const typeMatches = (type: string): boolean =>
    request.types.length === 0
      ? !liveOnly.includes(type) || request.includeHeartbeats
      : request.types.some((wanted) => wanted === type || (wanted.endsWith('.*') && type.startsWith(wanted.slice(0, -1))));
  return (event) =>
    typeMatches(event.type) &&
    within(request.queues, event.queue) &&
    within(request.jobTypes, event.jobType) &&
    within(request.jobIds, event.jobId);
}

/** Whether a filter list passes `value` (an empty list passes everything). */
function within(values: readonly string[], value: string | undefined): boolean {
  return values.length === 0 || (value !== undefined && values.includes(value));
}

function tooSlow(): OjsError {
  return new OjsError(
    'queue_full',
    `the watcher fell ${MAX_UNSENT_EVENTS} events behind; watch again with after = the last event id received`,
    {
      metadata: { bound: 'watcher_backlog' },
    },
  );
}
