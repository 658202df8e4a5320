import { assertField } from '../domain/errors';
import { queueNameProblem } from '../domain/identifiers';
import { DEFAULT_PAGE_SIZE, type Page, type PageRequest } from '../domain/paging';
import { mayUseQueue, type Principal } from '../domain/principal';
import { hasQueueLimits, queueLimitsProblem, type QueueLimits } from '../domain/queue-limits';
import type { QueueCounts, QueueStats } from '../store/job-store';
import type { AppContext } from './app-context';
import { assertMayUseQueue } from './caller-scope';

/** Most queues one metrics collection reads (ojs-distributed-tracing 10.3 expects under 50). */
export const METRICS_MAX_QUEUES = 1_000;

/**
 * The queues as operators see and steer them: counts, pause and throughput
 * (ojs-admin-api 6, ojs-queue-config). A queue-scoped caller sees and steers
 * only its queues.
 */
export class QueueAdmin {
  constructor(private readonly ctx: AppContext) {}

  /**
   * One page of the queues that hold jobs or are paused, with their counts
   * per state. For a queue-scoped caller the page leaves out other queues,
   * so it may hold fewer than asked while more follow.
   */
  async list(caller: Principal, page: PageRequest): Promise<Page<QueueCounts>> {
    const found = await this.ctx.store.listQueues(page);
    return { ...found, items: found.items.filter((counts) => mayUseQueue(caller, counts.queue)) };
  }

  /**
   * The counts of the first `maxQueues` queues in name order, read a page
   * at a time: what the queue gauges report on each metrics collection, so
   * its cost stays bounded however many queues there are.
   */
  async countsForMetrics(maxQueues = METRICS_MAX_QUEUES): Promise<QueueCounts[]> {
    const counts: QueueCounts[] = [];
    let after: string | undefined;
    do {
      const page = await this.ctx.store.listQueues({
        limit: Math.min(DEFAULT_PAGE_SIZE, maxQueues - counts.length),
        ...(after === undefined ? {} : { after }),
      });
      counts.push(...page.items);
      after = page.nextAfter;
    } while (after !== undefined && counts.length < maxQueues);
    return counts;
  }

  /** A queue's counts, pause and the last hour's throughput per minute. */
  async stats(caller: Principal, queue: string): Promise<QueueStats> {
    assertField('queue', queueNameProblem(queue));
    assertMayUseQueue(caller, 'queue', queue);
    return this.ctx.store.queueStats(queue, this.ctx.clock.now());
  }

  /**
   * Pauses (or resumes) a queue on every replica; returns its counts after.
   * Pausing a paused queue changes nothing and succeeds.
   */
  async setPaused(caller: Principal, queue: string, paused: boolean, actor?: string): Promise<QueueCounts> {
    assertField('queue', queueNameProblem(queue));
    assertMayUseQueue(caller, 'queue', queue);
    const now = this.ctx.clock.now();
    const { changed } = await this.ctx.store.setQueuePaused({ queue, paused, now, ...(actor === undefined ? {} : { actor }) });
    if (changed) this.ctx.logger.info({ queue, paused, actor }, paused ? 'queue paused' : 'queue resumed');
    return (await this.ctx.store.queueStats(queue, now)).counts;
  }

  /**
   * Sets a queue's fleet-wide limits (none, or no field set, clears them);
   * every replica's claims obey them from then on. Returns its counts after.
   */
  async setLimits(caller: Principal, queue: string, limits: QueueLimits | undefined): Promise<QueueCounts> {
    assertField('queue', queueNameProblem(queue));
    assertMayUseQueue(caller, 'queue', queue);
    const problem = limits === undefined ? undefined : queueLimitsProblem(limits);
    if (problem !== undefined) assertField(`limits.${problem.field}`, problem.problem);
    const now = this.ctx.clock.now();
    const set = limits !== undefined && hasQueueLimits(limits) ? limits : undefined;
    await this.ctx.store.setQueueLimits({ queue, now, ...(set === undefined ? {} : { limits: set }) });
    this.ctx.logger.info({ queue, limits: set }, set === undefined ? 'queue limits cleared' : 'queue limits set');
    return (await this.ctx.store.queueStats(queue, now)).counts;
  }
}
