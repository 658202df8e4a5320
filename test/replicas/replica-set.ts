import { testPrefix } from '../../tools/redis-server';
import { ServerProcess, type LogLine } from '../../tools/server-process';
import { auditRedis, auditThenStop } from '../support/store-audit';
import { connectTo, type Clients } from '../support/test-server';

/** One server process of a replica set, with clients connected to it. */
export interface Replica {
  readonly name: string;
  readonly process: ServerProcess;
  readonly clients: Clients;
}

export interface ReplicaSetOptions {
  redisUrl: string;
  /** Key prefix shared by the replicas; one of its own by default. */
  prefix?: string;
  /** Extra flags for every replica (timings). */
  args?: string[];
}

/**
 * Server processes (dist/src/main.js, built by `npm run build`) sharing one
 * Redis and key prefix: replicas of one deployment. A replica can be killed
 * and restarted (on a new port); every process ever started is stopped by
 * its own PID in stopAll().
 */
export class ReplicaSet {
  /** The current replica in each slot; a restart replaces it. */
  readonly replicas: Replica[] = [];
  /** Every process started, killed ones included (their logs stay readable). */
  private readonly processes: ServerProcess[] = [];
  /** Starts under way, which stopAll() waits for so that no process outlives the set. */
  private readonly launching = new Set<Promise<unknown>>();
  private readonly env: Record<string, string>;

  private constructor(private readonly options: ReplicaSetOptions & { prefix: string }) {
    this.env = { OJS_BACKEND: 'redis', REDIS_URL: options.redisUrl, OJS_REDIS_PREFIX: options.prefix };
  }

  static async start(count: number, options: ReplicaSetOptions): Promise<ReplicaSet> {
    const set = new ReplicaSet({ ...options, prefix: options.prefix ?? testPrefix() });
    const started = await Promise.allSettled(Array.from({ length: count }, (_, i) => set.launch(i)));
    const failure = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failure !== undefined) {
      await set.stopProcesses();
      throw failure.reason;
    }
    return set;
  }

  get prefix(): string {
    return this.options.prefix;
  }

  at(index: number): Replica {
    const replica = this.replicas[index];
    if (replica === undefined) throw new Error(`no replica ${index}`);
    return replica;
  }

  /** The replicas whose process is running. */
  live(): Replica[] {
    return this.replicas.filter((r) => r.process.isRunning);
  }

  /** Kills the replica's process with SIGKILL (a crash: no shutdown at all) and waits for it to exit. */
  async kill(index: number): Promise<void> {
    const replica = this.at(index);
    await replica.process.stop('SIGKILL');
    replica.clients.channel.close();
  }

  /** Starts a new process in the slot of a killed replica. */
  async restart(index: number): Promise<Replica> {
    if (this.at(index).process.isRunning) throw new Error(`replica ${index} is still running`);
    return this.launch(index);
  }

  /** Every log line of every process ever started in this set. */
  logs(): LogLine[] {
    return this.processes.flatMap((p) => p.logs);
  }

  /** Resolves with the first log line of any live replica that matches (or rejects after the timeout). */
  waitForLog(predicate: (line: LogLine) => boolean, description: string, timeoutMs = 10_000): Promise<LogLine> {
    return Promise.any(this.live().map((r) => r.process.waitForLog(predicate, description, timeoutMs))).catch(() => {
      throw new Error(`no replica logged ${description} within ${timeoutMs} ms`);
    });
  }

  /** Every broken invariant of the deployment's data in Redis (store audit), read through a store of its own. */
  audit(): Promise<string[]> {
    return auditRedis(this.options.redisUrl, this.prefix);
  }

  /**
   * Audits the deployment's data, then stops every process ever started
   * (SIGKILL, by PID) and closes the channels, then fails if the audit found
   * anything: every test on a replica set ends with the store checked.
   */
  async stopAll(): Promise<void> {
    await Promise.allSettled(this.launching);
    await auditThenStop(
      `the replica set on ${this.prefix}`,
      () => this.audit(),
      () => this.stopProcesses(),
    );
  }

  private async stopProcesses(): Promise<void> {
    await Promise.allSettled(this.launching);
    for (const replica of this.replicas) replica.clients.channel.close();
    await Promise.all(this.processes.map((p) => p.stop('SIGKILL')));
  }

  private launch(index: number): Promise<Replica> {
    const launched = (async () => {
      const server = await ServerProcess.start(this.env, this.options.args ?? []);
      this.processes.push(server);
      const replica: Replica = { name: `replica-${index}`, process: server, clients: connectTo(server.address) };
      this.replicas[index] = replica;
      return replica;
    })();
    this.launching.add(launched);
    return launched.finally(() => this.launching.delete(launched));
  }
}
