import { quote } from '../../domain/errors';
import { compareCursors } from '../../domain/event-facts';
import { JOB_STATES, type Job, type JobState } from '../../domain/job';
import type { EventRetention } from '../../domain/retention';
import { softTimeoutAt, waitingDeadline } from '../../domain/timeouts';
import { holdsUniqueKey } from '../../domain/unique-policy';
import { availableListingKey, listingKey, listingTimeOf, RUN_SEQUENCE_SPAN } from '../../domain/job-query';
import { PRIORITY_MAX } from '../../domain/job-submission';
import { isQueueIndexed, jobIdOfKey, TIME_LISTED_STATES } from './listing-indexes';
import { zeroCounts, type MemoryTables, type TimedEntry } from './memory-tables';
import type { MinHeap } from './min-heap';
import { THROUGHPUT_MINUTES } from './queue-throughput';
import type { SortedKeySet } from './sorted-key-set';
import { storedBytes } from './stored-size';
import { workflowProblems } from './workflow-audit';

/** Ids of the jobs with a live entry in each index. */
interface LiveEntries {
  ready: Set<string>;
  /** The listing key of each job with a live ready entry: its queue and the entry's run rank. */
  readyKeys: Map<string, string>;
  due: Set<string>;
  expiries: Set<string>;
  leases: Set<string>;
  softTimeouts: Set<string>;
  finished: Set<string>;
}

const WAITING: ReadonlySet<JobState> = new Set(['scheduled', 'available', 'pending', 'retryable']);

/**
 * Every broken invariant of the memory store's tables, as sentences; empty
 * when consistent. Reads everything (O(jobs + index entries)): a diagnostic
 * for tests and operators.
 *
 * Stale entries (made for an earlier state of a job, or for a job since
 * removed) are allowed anywhere: readers skip them and sweeps drop them.
 * What must hold is that every job has the live entries its state needs,
 * that live entries agree with their job, and that counters, sizes, the
 * ordered key sets, the listings, the throughput buckets, the event log and
 * the workers' reservations match the jobs and the bounds.
 */
export function auditTables(tables: MemoryTables, bounds: { events: Readonly<EventRetention>; maxEventBytes: number }): string[] {
  const problems: string[] = [];
  const live = liveEntries(tables, problems);
  for (const [id, slot] of tables.jobs) {
    if (slot.job.id !== id) problems.push(`job ${quote(id)} is stored under the id ${quote(slot.job.id)}`);
    const bytes = storedBytes(slot.job);
    if (slot.bytes !== bytes) problems.push(`job ${quote(id)} is counted as ${slot.bytes} bytes but measures ${bytes}`);
    const key = slot.job.state === 'available' ? live.readyKeys.get(id) : listingKey(listingTimeOf(slot.job), id);
    if (key !== undefined && slot.key !== key) {
      problems.push(`job ${quote(id)} is listed under ${quote(slot.key)} but its listing key is ${quote(key)}`);
    }
    checkIndexed(tables, slot.job, live, problems);
  }
  checkCounters(tables, problems);
  checkListings(tables, problems);
  checkQueues(tables, problems);
  checkUniqueKeys(tables, problems);
  problems.push(...tables.limiter.problems());
  problems.push(...tables.schedules.problems());
  problems.push(...workflowProblems(tables));
  checkLog(tables, bounds, problems);
  checkWorkers(tables, problems);
  return problems;
}

/** The live entries of every index, reporting those that disagree with their job. */
function liveEntries(tables: MemoryTables, problems: string[]): LiveEntries {
  const ready = new Set<string>();
  const readyKeys = new Map<string, string>();
  for (const [queue, fifo] of tables.ready) {
    let previous = -1;
    for (const [priority, entry] of fifo.entries()) {
      // Stale entries too: a queue's run order is the order of its ranks.
      if (entry.rank <= previous) problems.push(`the ready queue of ${quote(queue)} has rank ${entry.rank} after ${previous}`);
      previous = entry.rank;
      const job = tables.current(entry)?.job;
      if (job === undefined) continue;
      if (job.state !== 'available' || job.queue !== queue || job.priority !== priority || runPriority(entry.rank) !== priority) {
        problems.push(
          `job ${quote(job.id)} (${job.state}, queue ${quote(job.queue)}) has a live ready entry in ${quote(queue)} at priority ${priority}, rank ${entry.rank}`,
        );
      }
      ready.add(job.id);
      readyKeys.set(job.id, availableListingKey(queue, entry.rank));
    }
  }
  const timed = (name: string, heap: MinHeap<TimedEntry>, expectedAt: (job: Job) => number | undefined): Set<string> => {
    const ids = new Set<string>();
    for (const entry of heap.values()) {
      const job = tables.current(entry)?.job;
      if (job === undefined) continue;
      const at = expectedAt(job);
      if (at !== entry.at)
        problems.push(`job ${quote(job.id)} (${job.state}) has a live ${name} entry at ${entry.at}, expected ${at ?? 'none'}`);
      ids.add(job.id);
    }
    return ids;
  };
  const finished = new Set<string>();
  for (const [state, heap] of Object.entries(tables.finished)) {
    for (const id of timed(`${state} retention`, heap, (job) => (job.state === state ? job.completedAt : undefined))) finished.add(id);
  }
  return {
    ready,
    readyKeys,
    due: timed('due', tables.due, (job) =>
      job.state === 'scheduled' ? job.scheduledAt : job.state === 'retryable' ? job.nextRetryAt : undefined,
    ),
    expiries: timed('expiry', tables.expiries, (job) => (WAITING.has(job.state) ? waitingDeadline(job) : undefined)),
    // A renewed lease leaves its earlier entries current but at another time: only one at the expiry counts.
    leases: new Set([...tables.leases.values()].filter((e) => tables.isLiveLease(e)).map((e) => e.id)),
    softTimeouts: timed('soft timeout', tables.softTimeouts, (job) => (job.state === 'active' ? softTimeoutAt(job) : undefined)),
    finished,
  };
}

/** Whether the job has the live index entries and the reservation its state needs. */
function checkIndexed(tables: MemoryTables, job: Job, live: LiveEntries, problems: string[]): void {
  const id = quote(job.id);
  const lacks = (what: string): void => {
    problems.push(`job ${id} is ${job.state} but has no live ${what}`);
  };
  const deadline = WAITING.has(job.state) ? waitingDeadline(job) : undefined;
  if (deadline !== undefined && !live.expiries.has(job.id)) lacks(`expiry entry (due at ${deadline})`);
  // A claim drops a job past its waiting deadline from the ready queue; the expiry pass then discards it.
  const isDropped = deadline !== undefined && tables.mayHaveDroppedReady(deadline);
  if (job.state === 'available' && !live.ready.has(job.id) && !isDropped) lacks(`entry in the ready queue of ${quote(job.queue)}`);
  if ((job.state === 'scheduled' || job.state === 'retryable') && !live.due.has(job.id)) lacks('due entry');
  if ((job.state === 'completed' || job.state === 'cancelled' || job.state === 'discarded') && !live.finished.has(job.id)) {
    lacks('retention entry');
  }
  if (job.state !== 'active') {
    if (job.lease !== undefined) problems.push(`job ${id} is ${job.state} but still has a lease of worker ${quote(job.lease.workerId)}`);
    return;
  }
  if (job.lease === undefined) {
    lacks('lease');
    return;
  }
  if (!live.leases.has(job.id)) lacks(`lease entry (expiring at ${job.lease.expiresAt})`);
  // Taking a due soft timeout removes its entry; every entry due by the latest one taken has been taken.
  if (!live.softTimeouts.has(job.id) && !tables.mayHaveTakenSoftTimeout(softTimeoutAt(job))) lacks('soft-timeout entry');
  const holder = tables.workers.get(job.lease.workerId);
  if (holder === undefined) problems.push(`job ${id} is leased to worker ${quote(job.lease.workerId)}, which is not registered`);
  else if (!holder.held.has(job.id)) problems.push(`job ${id} is leased to worker ${quote(job.lease.workerId)}, which does not hold it`);
}

/** Counters per queue and state, totals, sizes and queue names against the jobs. */
function checkCounters(tables: MemoryTables, problems: string[]): void {
  const real = new Map<string, Record<JobState, number>>();
  const totals = zeroCounts();
  let bytes = 0;
  for (const { job, bytes: size } of tables.jobs.values()) {
    let counts = real.get(job.queue);
    if (counts === undefined) {
      counts = zeroCounts();
      real.set(job.queue, counts);
    }
    counts[job.state] += 1;
    totals[job.state] += 1;
    bytes += size;
  }
  for (const queue of new Set([...real.keys(), ...tables.counts.keys()])) {
    const [counted, actual] = [tables.counts.get(queue), real.get(queue)];
    if (actual === undefined) problems.push(`queue ${quote(queue)} has counters but holds no jobs`);
    else if (counted === undefined) problems.push(`queue ${quote(queue)} holds jobs but has no counters`);
    else for (const state of JOB_STATES) mismatch(problems, `queue ${quote(queue)} counts ${state} jobs as`, counted[state], actual[state]);
  }
  for (const state of JOB_STATES) mismatch(problems, `the store counts ${state} jobs as`, tables.totals[state], totals[state]);
  mismatch(problems, 'the store counts its jobs as taking', tables.storedBytes, bytes);
  for (const queue of tables.ready.keys()) {
    if (!real.has(queue)) problems.push(`queue ${quote(queue)} has a ready queue but holds no jobs`);
  }
}

/**
 * Each listing of a state listed by time, and each of its per-queue
 * listings, holds exactly the keys of the jobs in that state (and queue):
 * every key names such a job under that very key, and there are as many
 * keys as jobs. (Available jobs are listed from their ready queues.)
 */
function checkListings(tables: MemoryTables, problems: string[]): void {
  const check = (where: string, keys: Iterable<string>, state: JobState, queue?: string): number => {
    let count = 0;
    for (const key of keys) {
      count += 1;
      const slot = tables.jobs.get(jobIdOfKey(key));
      if (slot?.key === key && slot.job.state === state && (queue === undefined || slot.job.queue === queue)) continue;
      const found = slot === undefined ? 'no stored job' : `job ${quote(slot.job.id)} (${slot.job.state}, queue ${quote(slot.job.queue)})`;
      problems.push(`the ${where} has ${quote(key)}, which names ${found}`);
    }
    return count;
  };
  for (const state of TIME_LISTED_STATES) {
    const all = tables.listings.keys(state);
    mismatch(problems, `the ${state} listing has`, check(`${state} listing`, all?.after() ?? [], state), tables.totals[state]);
    if (!isQueueIndexed(state)) continue;
    let byQueue = 0;
    for (const [queue, keys] of tables.listings.queues(state)) {
      if (keys.size === 0) problems.push(`the ${state} listing of queue ${quote(queue)} is kept though empty`);
      byQueue += check(`${state} listing of queue ${quote(queue)}`, keys.after(), state, queue);
    }
    mismatch(problems, `the ${state} listings per queue have`, byQueue, tables.totals[state]);
  }
}

/** Listed queues are those that hold jobs or are paused; throughput is kept only for them, an hour at most. */
function checkQueues(tables: MemoryTables, problems: string[]): void {
  const listed = new Set([...tables.counts.keys(), ...tables.paused]);
  checkKeySet(problems, 'queue', tables.queueNames, listed);
  for (const [queue, buckets] of tables.throughput.queues()) {
    if (!listed.has(queue)) problems.push(`queue ${quote(queue)} keeps throughput but holds no jobs and is not paused`);
    if (buckets > THROUGHPUT_MINUTES) problems.push(`queue ${quote(queue)} keeps ${buckets} minutes of throughput`);
  }
}

/** The log within its bounds, its sizes summed right, its cursors strictly increasing. */
function checkLog(tables: MemoryTables, bounds: { events: Readonly<EventRetention>; maxEventBytes: number }, problems: string[]): void {
  const { log } = tables;
  if (log.size > bounds.events.maxCount)
    problems.push(`the event log holds ${log.size} facts, beyond its count of ${bounds.events.maxCount}`);
  if (log.size > 1 && log.bytes > bounds.maxEventBytes) {
    problems.push(`the event log holds ${log.bytes} bytes of facts, beyond its ${bounds.maxEventBytes}`);
  }
  let bytes = 0;
  let previous: string | undefined;
  for (const { recorded, bytes: size } of log.held()) {
    bytes += size;
    if (previous !== undefined && compareCursors(previous, recorded.cursor) >= 0) {
      problems.push(`the event log has ${recorded.cursor} after ${previous}`);
    }
    previous = recorded.cursor;
  }
  mismatch(problems, 'the event log counts its facts as taking', log.bytes, bytes);
}

/** Workers' reservations against leases, and the worker id set against the registry. */
function checkWorkers(tables: MemoryTables, problems: string[]): void {
  for (const [workerId, slot] of tables.workers) {
    for (const jobId of slot.held) {
      const job = tables.jobs.get(jobId)?.job;
      if (job?.lease?.workerId === workerId) continue;
      problems.push(
        `worker ${quote(workerId)} holds job ${quote(jobId)}, which is ${job === undefined ? 'not stored' : `${job.state} and not leased to it`}`,
      );
    }
  }
  checkKeySet(problems, 'worker', tables.workerIds, new Set(tables.workers.keys()));
}

function checkKeySet(problems: string[], what: string, keys: SortedKeySet, expected: ReadonlySet<string>): void {
  let previous: string | undefined;
  for (const key of keys.after()) {
    if (!expected.has(key)) problems.push(`the ${what} listing has ${quote(key)}, which is not stored`);
    if (previous !== undefined && previous >= key) problems.push(`the ${what} listing has ${quote(key)} after ${quote(previous)}`);
    previous = key;
  }
  if (keys.size !== expected.size) problems.push(`the ${what} listing has ${keys.size} keys for ${expected.size} stored`);
}

function mismatch(problems: string[], what: string, counted: number, actual: number): void {
  if (counted !== actual) problems.push(`${what} ${counted}, but there are ${actual}`);
}

/** The priority a run rank was made for (domain runRank). */
function runPriority(rank: number): number {
  return PRIORITY_MAX - Math.floor(rank / RUN_SEQUENCE_SPAN);
}

/**
 * Each uniqueness key names a job that has it and is in one of its policy's
 * states; a job in its counted states holds its key, or a later job does.
 */
function checkUniqueKeys(tables: MemoryTables, problems: string[]): void {
  for (const [key, id] of tables.uniqueKeys) {
    const job = tables.jobs.get(id)?.job;
    if (job === undefined) problems.push(`uniqueness key ${key} names job ${quote(id)}, which does not exist`);
    else if (job.unique?.key !== key)
      problems.push(`uniqueness key ${key} names job ${quote(id)}, whose key is ${job.unique?.key ?? 'none'}`);
    else if (!holdsUniqueKey(job))
      problems.push(`uniqueness key ${key} is held by job ${quote(id)} in ${job.state}, which its policy does not count`);
  }
  for (const { job } of tables.jobs.values()) {
    if (holdsUniqueKey(job) && !tables.uniqueKeys.has(job.unique.key)) {
      problems.push(`job ${quote(job.id)} is ${job.state} but its uniqueness key ${job.unique.key} is missing`);
    }
  }
}
