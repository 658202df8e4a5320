import { performance } from 'node:perf_hooks';
import { ChannelCredentials, createChannel, createClient, type Channel } from 'nice-grpc';
import { uuidv7 } from 'uuidv7';
import { Job } from '../gen/ojs/server/v1/job';
import { JobServiceDefinition, type JobServiceClient } from '../gen/ojs/server/v1/job_service';
import { WorkerServiceDefinition } from '../gen/ojs/server/v1/worker_service';
import type { Logger } from '../packages/sdk/src';
import { WorkerStreamClient } from '../packages/sdk/src/worker-stream-client';
import { pause } from '../lib/pause';
import { Arrivals, bothArrived } from './arrivals';
import { call, withoutStalling } from './deadline';
import { percentiles, type Percentiles } from './percentiles';
import { OwnPauses, splitByPauses, type PauseSplit, type Span } from './own-pauses';
import { ProtocolWorker } from './protocol-worker';

/** What the load process is asked to do (its one argument, as JSON). */
export interface FleetPlan {
  address: string;
  workers: number;
  /** Worker k serves queue k mod `queues`; job i goes to queue i mod `queues`. */
  queues: number;
  run: string;
  /** Workers per gRPC connection: each has two streams, and a connection carries a bounded number of them. */
  workersPerConnection: number;
  /** How long the fleet beats with no job before jobs flow. */
  idleMs: number;
  /** Jobs that flow, one per Enqueue call, at `rate` a second. */
  jobs: number;
  rate: number;
  waitMs: number;
}

/** The line that ends the flow of jobs: their latency, whole and without this process's pauses, and what went wrong. */
export interface FlowEnd extends Percentiles, PauseSplit {
  msg: 'flow-end';
  jobs: number;
  refusedAcks: number;
  reRegistrations: number;
  ackFailures: number;
  /** What the workers logged, by message, counted. */
  problems: Record<string, number>;
}

/** Registrations in flight at once: a fleet that starts all at once would measure a stampede, not the server. */
const REGISTERING_AT_ONCE = 64;
const STOPPING_AT_ONCE = 256;

/**
 * The load process of `BENCH_ONLY=workers`: a fleet of hand-written workers
 * (each with its Beat stream, beating at the interval the server announces,
 * and its Fetch stream) on connections of its own, against one server. It
 * prints JSON lines the benchmark reads as it goes (registered, idle-start,
 * idle-end, flow-start, flow-end, then stopped or failed), measuring what
 * only it can see (the time to register, delivery latency); the benchmark
 * reads the server's CPU and memory from the operating system at those
 * lines. SIGTERM stops (and deregisters) the workers and ends the process.
 */
class Fleet {
  private readonly channels: Channel[];
  private readonly producerChannel: Channel;
  private readonly jobs: JobServiceClient;
  private readonly workers: ProtocolWorker[] = [];
  private readonly arrivals = new Arrivals<string>();
  /** What the workers logged (reconnections, say), by message, counted. */
  private readonly problems = new Map<string, number>();
  private ackFailures = 0;

  constructor(private readonly plan: FleetPlan) {
    this.channels = Array.from({ length: Math.ceil(plan.workers / plan.workersPerConnection) }, () => channelTo(plan.address));
    this.producerChannel = channelTo(plan.address);
    this.jobs = createClient(JobServiceDefinition, this.producerChannel);
  }

  /** Registers the workers, a bounded number at a time, and waits until each beat once. */
  async start(): Promise<void> {
    const { plan } = this;
    const started = performance.now();
    const clients = this.channels.map((channel) => ({
      client: createClient(WorkerServiceDefinition, channel),
      streams: new WorkerStreamClient(channel, undefined),
    }));
    const count = (_context: object, message: string): void => void this.problems.set(message, (this.problems.get(message) ?? 0) + 1);
    const logger: Logger = { debug: () => {}, info: () => {}, warn: count, error: count };
    let next = 0;
    await Promise.all(
      Array.from({ length: REGISTERING_AT_ONCE }, async () => {
        while (next < plan.workers) {
          const k = next++;
          const worker = await ProtocolWorker.start({
            ...clients[Math.floor(k / plan.workersPerConnection)]!,
            workerId: `fleet-${plan.run}-${k}`,
            queues: [this.queueOf(k)],
            concurrency: 10,
            waitMs: plan.waitMs,
            logger,
            onDelivery: (delivery, self) => {
              this.arrivals.arrived(delivery.job!.id);
              self.ack(delivery).catch(() => this.ackFailures++);
            },
          });
          this.workers.push(worker);
        }
      }),
    );
    const answered = (): number => this.workers.filter((worker) => worker.beatAnswers > 0).length;
    await withoutStalling(
      'the first beat of every worker answered',
      plan.waitMs,
      answered,
      waitFor(() => answered() === plan.workers),
    );
    print({ msg: 'registered', workers: this.workers.length, connections: this.channels.length, ms: performance.now() - started });
  }

  /** Beats only, for the plan's idle time. */
  async idle(): Promise<void> {
    print({ msg: 'idle-start' });
    await pause(this.plan.idleMs);
    print({ msg: 'idle-end', beatAnswers: this.sum((w) => w.beatAnswers) });
  }

  /**
   * Jobs flow; prints their enqueue-to-delivery latency, the same without
   * the samples a pause of this process's collector fell in (the fleet of
   * ten thousand workers shares this one heap, where each real worker has
   * its own), and what went wrong on the way.
   */
  async flow(): Promise<void> {
    const { plan } = this;
    const spans: Span[] = [];
    const pauses = new OwnPauses();
    print({ msg: 'flow-start' });
    try {
      await withoutStalling(
        `the flow of ${plan.jobs} jobs`,
        plan.waitMs,
        () => spans.length,
        paced(plan, spans, (i) => this.send(i)),
      );
    } finally {
      pauses.stop();
    }
    const end: FlowEnd = {
      msg: 'flow-end',
      jobs: spans.length,
      ...percentiles(spans.map((span) => span.end - span.start)),
      ...splitByPauses(spans, pauses),
      refusedAcks: this.sum((w) => w.refusedAcks),
      reRegistrations: this.sum((w) => w.reRegistrations),
      ackFailures: this.ackFailures,
      problems: Object.fromEntries(this.problems),
    };
    print(end);
  }

  /** Stops (and deregisters) every worker started, a bounded number at a time, and closes the connections. */
  async stop(): Promise<void> {
    let stopping = 0;
    await Promise.all(
      Array.from({ length: STOPPING_AT_ONCE }, async () => {
        while (stopping < this.workers.length) await this.workers[stopping++]!.stop();
      }),
    );
    for (const channel of [...this.channels, this.producerChannel]) channel.close();
    print({ msg: 'stopped' });
  }

  /** Enqueues job `i`; resolves with the time from the call to its delivery. */
  private async send(i: number): Promise<Span> {
    const { waitMs } = this.plan;
    const id = uuidv7();
    const delivered = this.arrivals.expect(id, `the delivery of job ${i}`, waitMs);
    const started = performance.now();
    const job = Job.fromPartial({ id, type: 'bench.noop', queue: this.queueOf(i), args: [i] });
    const enqueued = call(`the Enqueue of job ${i}`, waitMs, (signal) => this.jobs.enqueue({ jobs: [job], pending: false }, { signal }));
    return { start: started, end: await bothArrived(enqueued, delivered) };
  }

  private queueOf(n: number): string {
    return `fleet-${this.plan.run}-${n % this.plan.queues}`;
  }

  private sum(of: (worker: ProtocolWorker) => number): number {
    return this.workers.reduce((total, worker) => total + of(worker), 0);
  }
}

/**
 * Sends `plan.jobs` jobs at `plan.rate` a second, each on schedule whether
 * or not earlier ones were delivered (an open loop: the latency measured is
 * the server's, not that of a queue the load built up), and records each
 * one's time in `spans`. Stops sending at the first failure, and fails.
 */
async function paced(plan: FleetPlan, spans: Span[], send: (i: number) => Promise<Span>): Promise<void> {
  const started = performance.now();
  const sent: Promise<void>[] = [];
  // Set from the callbacks, so that no failure is ever left unhandled.
  const failed: { error?: Error } = {};
  for (let i = 0; i < plan.jobs && failed.error === undefined; i++) {
    const wait = started + (i * 1_000) / plan.rate - performance.now();
    if (wait > 0) await pause(wait);
    sent.push(
      send(i).then(
        (span) => void spans.push(span),
        (error: unknown) => void (failed.error ??= error instanceof Error ? error : new Error(String(error))),
      ),
    );
  }
  await Promise.all(sent);
  if (failed.error !== undefined) throw failed.error;
}

/** A channel with a connection of its own: grpc-js otherwise shares one among channels to the same address. */
function channelTo(address: string): Channel {
  return createChannel(address, ChannelCredentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
    'grpc.keepalive_time_ms': 20_000,
    'grpc.keepalive_timeout_ms': 10_000,
    'grpc.keepalive_permit_without_calls': 1,
  });
}

/** Resolves once `isDone()` holds, looking every 50 ms (the wait around it has the deadline). */
async function waitFor(isDone: () => boolean): Promise<void> {
  while (!isDone()) await pause(50);
}

function print(line: object): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

async function main(): Promise<void> {
  const plan = JSON.parse(process.argv[2] ?? '{}') as FleetPlan;
  const fleet = new Fleet(plan);
  // In place before the first worker starts: SIGTERM may come at any time (after the last line, or while
  // the benchmark gives up on a failed phase), and stops whatever was started.
  const terminated = new Promise<'terminated'>((resolve) => process.once('SIGTERM', () => resolve('terminated')));
  const steps = (async () => {
    await fleet.start();
    await fleet.idle();
    await fleet.flow();
  })();
  let exitCode = 0;
  try {
    if ((await Promise.race([steps, terminated])) !== 'terminated') await terminated;
  } catch (error) {
    exitCode = 1;
    print({ msg: 'failed', reason: error instanceof Error ? error.message : String(error) });
    // The benchmark answers a failure with SIGTERM; it may be gone, so not for long.
    await Promise.race([terminated, pause(plan.waitMs)]);
  }
  // Steps cut short by SIGTERM may still fail: the process ends as soon as the workers have stopped.
  steps.catch(() => {});
  await fleet.stop();
  process.exit(exitCode);
}

void main();
