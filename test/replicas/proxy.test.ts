import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:http2';
import { pause } from '../../lib/pause';
import { Worker, type Logger } from '../../packages/sdk/src';
import { NginxGrpcProxy } from '../../tools/nginx-grpc-proxy';
import { freePort } from '../../tools/redis-server';
import { ServerProcess } from '../../tools/server-process';
import { enqueue } from '../support/jobs';
import { rawHealthCheck } from '../support/raw-health-check';
import { connectTo, type Clients } from '../support/test-server';
import { eventually, Progress } from '../support/waiting';
import { ReplicaSet } from './replica-set';

/**
 * Replicas on one Redis behind a real L7 gRPC proxy (nginx, grpc_pass over
 * HTTP/2), with SDK workers and producers talking to the proxy only, as in a
 * deployment. The proxy closes streams and connections silent for
 * PROXY_IDLE_SECONDS; the replicas' keepalives and the workers' beats come
 * far more often. (dist/ must be fresh: `npm run build`, which `npm test` runs first.)
 */

const PROXY_IDLE_SECONDS = 1;
/** Stream keepalives and beats: well under the proxy's idle timeout. */
const TIMINGS = ['--stream-keepalive', '250ms', '--heartbeat-interval', '250ms', '--heartbeat-timeout', '10s'];
const JOB_MS = 20;

const newQueue = (): string => `q-${randomUUID().slice(0, 8)}`;

/**
 * Resolves when the proxy closes an HTTP/2 connection that went quiet after
 * one health check: one of its idle timeouts has passed, as the proxy itself
 * counts it (an event to wait on, rather than a guess at a duration).
 */
function idleConnectionClosed(address: string): Promise<void> {
  const session = connect(`http://${address}`);
  session.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => session.on('close', () => resolve()));
  return rawHealthCheck(session).then(() => closed);
}

/** A logger that keeps the SDK's warnings (a broken stream is one) for the test to read. */
class WarningLog implements Logger {
  readonly warnings: string[] = [];
  debug(): void {}
  info(): void {}
  warn(_context: object, message: string): void {
    this.warnings.push(message);
  }
  error(_context: object, message: string): void {
    this.warnings.push(message);
  }

  /** The warnings of Fetch and Beat streams that broke (and were opened again). */
  brokenStreams(): string[] {
    return this.warnings.filter((w) => /stream failed; reconnecting/.test(w));
  }
}

/** SDK workers connected through the proxy, counting how often each job ran. */
class Fleet {
  readonly workers: Worker[] = [];
  readonly log = new WarningLog();
  readonly runs = new Map<string, number>();
  readonly progress = new Progress();

  async start(address: string, queues: string[]): Promise<void> {
    await Promise.all(
      queues.map(async (queue) => {
        const worker = new Worker({ address, queues: [queue], concurrency: 5, logger: this.log, shutdownGracePeriodMs: 2_000 });
        worker.handle('work', async () => {
          await pause(JOB_MS);
          return 'done';
        });
        // Counted when the handler returns, so a second run of the same job would show as 2.
        worker.use(async (ctx, next) => {
          const result = await next(ctx);
          this.runs.set(ctx.job.id, (this.runs.get(ctx.job.id) ?? 0) + 1);
          this.progress.changed();
          return result;
        });
        this.workers.push(worker);
        await worker.start();
      }),
    );
  }

  /** Waits until every one of `ids` ran; resolves with those that ran more than once. */
  async untilRan(ids: readonly string[], timeoutMs = 20_000): Promise<string[]> {
    await this.progress.until(
      () => ids.every((id) => this.runs.has(id)),
      () => `${ids.length} jobs to run, ${ids.filter((id) => this.runs.has(id)).length} did`,
      timeoutMs,
    );
    return ids.filter((id) => this.runs.get(id) !== 1);
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((w) => w.stop({ force: true })));
  }
}

/** Connections the process listening on 127.0.0.1:`port` holds open (Linux's /proc/net/tcp; nginx opens one per stream). */
function connectionsTo(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((row) => row.trim().split(/\s+/))
    .filter(([, localAddress, , state]) => localAddress === local && state === '01').length;
}

const enqueueWork = (clients: Clients, queue: string, count: number) =>
  enqueue(clients, ...Array.from({ length: count }, () => ({ queue, type: 'work' })));

describe('replicas behind an nginx gRPC proxy', () => {
  let set: ReplicaSet;
  let proxy: NginxGrpcProxy;
  let producer: Clients;
  const fleet = new Fleet();

  beforeAll(async () => {
    set = await ReplicaSet.start(2, { redisUrl: process.env['OJS_TEST_REDIS_URL']!, args: TIMINGS });
    proxy = await NginxGrpcProxy.start({ upstreams: set.replicas.map((r) => r.process.address), idleTimeoutSeconds: PROXY_IDLE_SECONDS });
    producer = connectTo(proxy.address);
  });
  afterEach(() => fleet.stop());
  afterAll(async () => {
    producer?.channel.close();
    await proxy?.destroy();
    await set?.stopAll();
  });

  it("keeps workers' Fetch and Beat streams open through the proxy's idle timeout", async () => {
    const queue = newQueue();
    await fleet.start(proxy.address, [queue, queue]);
    // Idle for three of the proxy's idle timeouts, one after the other: streams without keepalives would be closed meanwhile.
    for (let i = 0; i < 3; i++) await idleConnectionClosed(proxy.address);
    const jobs = await enqueueWork(producer, queue, 20);
    expect(await fleet.untilRan(jobs.map((j) => j.id))).toEqual([]);
    expect(fleet.log.brokenStreams()).toEqual([]);
  });

  it('loses no job and runs none twice when the proxy restarts under working workers', async () => {
    const queue = newQueue();
    await fleet.start(proxy.address, [queue, queue, queue]);
    const jobs = await enqueueWork(set.at(0).clients, queue, 150);
    await fleet.progress.until(
      () => fleet.runs.size >= 20,
      () => `20 jobs to run before the restart, ${fleet.runs.size} did`,
    );
    await proxy.stop();
    await proxy.startAgain();
    expect(
      await fleet.untilRan(
        jobs.map((j) => j.id),
        30_000,
      ),
    ).toEqual([]);
    // The restart was felt: the workers' streams broke and were opened again.
    expect(fleet.log.brokenStreams()).not.toEqual([]);
  });

  it('moves the workers of a draining replica (SIGTERM) to the other one', async () => {
    // A queue per worker: a job on each proves that worker's Fetch stream is open somewhere.
    const queues = Array.from({ length: 4 }, newQueue);
    await fleet.start(proxy.address, queues);
    const [drained, remaining] = [set.at(0), set.at(1)];
    await eventually(
      async () => (connectionsTo(drained.process.port) > 0 ? true : undefined),
      () => 'some worker stream on the replica to drain',
    );
    expect(await drained.process.stop('SIGTERM')).toBe(0);
    const jobs = (await Promise.all(queues.map((q) => enqueueWork(remaining.clients, q, 3)))).flat();
    expect(await fleet.untilRan(jobs.map((j) => j.id))).toEqual([]);
  });
});

describe('rebalancing long-lived streams with a maximum connection age', () => {
  const AGE_MS = 2_000;
  const GRACE_MS = 500;
  const args = [...TIMINGS, '--max-connection-age', `${AGE_MS}ms`, '--max-connection-age-grace', `${GRACE_MS}ms`];
  let set: ReplicaSet;
  let proxy: NginxGrpcProxy;
  let added: ServerProcess | undefined;
  const fleet = new Fleet();

  afterAll(async () => {
    await fleet.stop();
    await proxy?.destroy();
    await added?.stop('SIGKILL');
    await set?.stopAll();
  });

  it('spreads workers over a replica added behind the proxy within the age, running no job twice', async () => {
    set = await ReplicaSet.start(2, { redisUrl: process.env['OJS_TEST_REDIS_URL']!, args });
    // The proxy knows the third replica's address before it runs, as a scaled-out deployment's would.
    const addedPort = await freePort();
    const upstreams = [...set.replicas.map((r) => r.process.address), `127.0.0.1:${addedPort}`];
    proxy = await NginxGrpcProxy.start({ upstreams, idleTimeoutSeconds: PROXY_IDLE_SECONDS });
    const queue = newQueue();
    await fleet.start(
      proxy.address,
      Array.from({ length: 6 }, () => queue),
    );
    const jobs = await enqueueWork(set.at(0).clients, queue, 400);

    const env = { OJS_BACKEND: 'redis', REDIS_URL: process.env['OJS_TEST_REDIS_URL']!, OJS_REDIS_PREFIX: set.prefix };
    added = await ServerProcess.start(env, [...args, '--port', String(addedPort)]);
    // Every worker's streams (12, one upstream connection each) are reopened within age + grace, now over three replicas.
    const ports = [...set.replicas.map((r) => r.process.port), addedPort];
    await eventually(
      async () => (connectionsTo(addedPort) >= 3 && ports.every((port) => connectionsTo(port) > 0) ? true : undefined),
      () => `worker streams on every replica (connections: ${ports.map(connectionsTo).join(', ')})`,
      { timeoutMs: AGE_MS * 1.1 + GRACE_MS + 5_000, intervalMs: 100 },
    );
    expect(
      await fleet.untilRan(
        jobs.map((j) => j.id),
        30_000,
      ),
    ).toEqual([]);
  });
});
