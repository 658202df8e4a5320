import { redisPrefixProblem } from '../../../lib/redis-prefix';

/**
 * Joins the script keys into the one setting scripts read them from
 * (script-runner.ts scriptPrologue; lua/lib/ojs.lua KEY_LIST_SEPARATOR):
 * no key holds it, since a prefix holds no control character.
 */
export const KEY_LIST_SEPARATOR = '\x1f';

/**
 * The only place Redis key names are built. Every key starts with the
 * configured prefix, whose {hash tag} puts all keys of a deployment in one
 * Redis Cluster slot: each script touches that slot alone.
 *
 * Scripts receive the same key list (see {@link RedisKeys.scriptKeys}).
 * Some entries are prefixes of per-job, per-queue or per-worker keys (a
 * script learns ids only as it runs, e.g. when it pops a queue); they carry
 * the same hash tag, so the keys built from them stay in the declared slot.
 */
export class RedisKeys {
  readonly job: string;
  readonly ready: string;
  readonly due: string;
  readonly expiries: string;
  readonly leases: string;
  readonly seq: string;
  /** The names of the queues that hold jobs or are paused, all with score 0: read by name with ZRANGEBYLEX. */
  readonly queues: string;
  readonly counts: string;
  readonly workers: string;
  readonly worker: string;
  readonly held: string;
  /**
   * Listing indexes, per state (`<listing><state>`) and per state and queue
   * (`<listing><state>:<queue>`): sorted sets read by ZRANGEBYLEX whose
   * members are domain listingKeys (listing time, id).
   */
  readonly listing: string;
  readonly channel: string;
  readonly timeouts: string;
  /** Worker ids, all with score 0: read by id with ZRANGEBYLEX (the `workers` set orders them by last beat). */
  readonly workerIds: string;
  /** The names of the paused queues. */
  readonly paused: string;
  /** Per queue and minute (`<stats><queue>:<minute start>`), the throughput counts of that minute; each expires. */
  readonly stats: string;
  /** The event log: a stream of facts, one entry per script call that recorded any (fact-codec.ts). */
  readonly events: string;
  /** The position of the last fact the event log numbered (a counter: domain event-facts.ts cursors). */
  readonly eventPosition: string;
  /** The pub/sub channel of live heartbeat notices (never stored). */
  readonly heartbeats: string;
  /** The queues' fleet-wide limits: a hash, queue -> "maxActive,rate limit,rate period ms" ('' where unset). */
  readonly limits: string;
  /** Per queue with a rate (`<starts><queue>`), its sliding log of recent starts: a sorted set, "<job id>:<attempt>" by start time. */
  readonly starts: string;
  /**
   * Per uniqueness key (`<unique><key>`, domain unique-policy.ts), the id of
   * the job holding it; expires at the job's created_at plus its policy's
   * period, and goes when the job leaves its policy's states.
   */
  readonly unique: string;
  /** Per cron schedule (`<schedule><name>`), a hash of its spec and runs (schedule-codec.ts). */
  readonly schedule: string;
  /** The names of the schedules, all with score 0: read by name with ZRANGEBYLEX. */
  readonly schedules: string;
  /** The names of the schedules that have a next tick, scored by it. */
  readonly scheduleDue: string;
  /**
   * Per queue with limits whose jobs were held back (`<rateLimitEvents><queue>`),
   * the sampling of its rate-limit events (domain rate-limit-events.ts): a
   * hash, `quiet` (no exceeded before then) and `held` (the open episode's
   * strategy). Kept while an episode is open; otherwise it expires once its
   * window has passed. It goes with the queue's limits.
   */
  readonly rateLimitEvents: string;
  /**
   * Per workflow (`<workflow><id>`), its run: a hash of its state, counters
   * and times, each node's progress (workflow-codec.ts), and copies of the
   * results of the jobs that succeeded. Changed by the settlements that
   * advance it (lua/lib/workflows.lua).
   */
  readonly workflow: string;
  /** Per workflow (`<workflowPlan><id>`), its plan: a hash written once at creation, never changed (workflow-codec.ts). */
  readonly workflowPlan: string;
  /**
   * Per end state (`<workflowEnded><state>`: completed, failed, cancelled),
   * the ended workflows by end time: pruneTerminal drops them past the
   * retention of their end.
   */
  readonly workflowEnded: string;

  constructor(readonly prefix: string) {
    const problem = redisPrefixProblem(prefix);
    if (problem !== undefined) throw new Error(`Redis key prefix ${JSON.stringify(prefix)} ${problem}`);
    this.job = `${prefix}:job:`;
    this.ready = `${prefix}:ready:`;
    this.due = `${prefix}:due`;
    this.expiries = `${prefix}:expiries`;
    this.leases = `${prefix}:leases`;
    this.seq = `${prefix}:seq`;
    this.queues = `${prefix}:queues`;
    this.counts = `${prefix}:counts:`;
    this.workers = `${prefix}:workers`;
    this.worker = `${prefix}:worker:`;
    this.held = `${prefix}:held:`;
    this.listing = `${prefix}:listing:`;
    this.channel = `${prefix}:signals`;
    this.timeouts = `${prefix}:timeouts`;
    this.workerIds = `${prefix}:worker-ids`;
    this.paused = `${prefix}:paused`;
    this.stats = `${prefix}:stats:`;
    this.events = `${prefix}:events`;
    this.eventPosition = `${prefix}:event-position`;
    this.heartbeats = `${prefix}:heartbeats`;
    this.limits = `${prefix}:limits`;
    this.starts = `${prefix}:starts:`;
    this.unique = `${prefix}:unique:`;
    this.schedule = `${prefix}:schedule:`;
    this.schedules = `${prefix}:schedules`;
    this.scheduleDue = `${prefix}:schedule-due`;
    this.rateLimitEvents = `${prefix}:rate-limit-events:`;
    this.workflow = `${prefix}:workflow:`;
    this.workflowPlan = `${prefix}:workflow-plan:`;
    this.workflowEnded = `${prefix}:workflow-ended:`;
  }

  /** The keys of every script, in the order lua/lib/ojs.lua names them (script-runner.ts scriptPrologue passes them). */
  scriptKeys(): string[] {
    return [
      this.job,
      this.ready,
      this.due,
      this.expiries,
      this.leases,
      this.seq,
      this.queues,
      this.counts,
      this.workers,
      this.worker,
      this.held,
      this.listing,
      this.channel,
      this.timeouts,
      this.workerIds,
      this.paused,
      this.stats,
      this.events,
      this.heartbeats,
      this.eventPosition,
      this.limits,
      this.starts,
      this.unique,
      this.schedule,
      this.schedules,
      this.scheduleDue,
      this.rateLimitEvents,
      this.workflow,
      this.workflowPlan,
      this.workflowEnded,
    ];
  }

  /**
   * A SCAN pattern matching every key of the deployment (the audit walks
   * them), with the glob characters of the prefix escaped.
   */
  scanPattern(): string {
    return `${this.prefix.replace(/[\\*?[\]]/g, (c) => `\\${c}`)}:*`;
  }
}
