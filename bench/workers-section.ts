import { join } from 'node:path';
import { pause } from '../lib/pause';
import { performance } from 'node:perf_hooks';
import { projectRoot } from '../src/project-root';
import { JsonLinesProcess, type JsonLine } from '../tools/json-lines-process';
import type { RedisServerProcess } from '../tools/redis-server';
import { processCpuMicros, processRssBytes } from './cpu-accounting';
import { cleanUp, WAIT_MS } from './deadline';
import { count, ms, pct } from './format';
import { describePauses, gcPausesSince, GC_TRACE_OPTIONS, type GcPauses } from './gc-pauses';
import { describeLoopDelays, loopDelaysSince, LOOP_DELAY_TRACE_OPTIONS, type LoopDelays } from './loop-delays';
import { redisScriptCalls, resetRedisStats } from './redis-accounting';
import type { Phases } from './phases';
import { redisEnv, track, withRedis, withServerProcess } from './servers';
import type { FleetPlan, FlowEnd } from './worker-fleet';
import { withoutPauses } from './own-pauses';

/**
 * `BENCH_ONLY=workers`: many live workers on one replica on Redis. A load
 * process of its own (bench/worker-fleet.ts) registers the fleet; this
 * process reads the server's and Redis's CPU and memory from the operating
 * system at the moments the load process announces. Sizes from the
 * environment: BENCH_WORKERS (the fleet, default 10,000), BENCH_IDLE_MS (the
 * window with beats only, default 15 s: three beat intervals),
 * BENCH_FLEET_JOBS (jobs that flow, default 2,000) and BENCH_FLEET_RATE
 * (how many a second, default 100).
 */
export const FLEET = Number(process.env['BENCH_WORKERS'] ?? 10_000);
export const IDLE_MS = Number(process.env['BENCH_IDLE_MS'] ?? 15_000);
const FLEET_JOBS = Number(process.env['BENCH_FLEET_JOBS'] ?? 2_000);
const FLEET_RATE = Number(process.env['BENCH_FLEET_RATE'] ?? 100);
/** 250 workers, 500 streams: half of what the server lets one connection carry at once by default. */
export const WORKERS_PER_CONNECTION = Number(process.env['BENCH_WORKERS_PER_CONNECTION'] ?? 250);
/** Longest the load process may take to register or stop a fleet (its own waits have WAIT_MS each). */
const FLEET_STEP_MS = 600_000;

interface Shape {
  workers: number;
  queues: number;
}

/** CPU both processes used over a window, in microseconds, and the window's length. */
interface CpuUse {
  server: number;
  redis: number;
  windowMicros: number;
}

/** Reads the CPU the server and Redis used since the last `start()`. */
class CpuMeter {
  private startedAt = 0;
  private server = 0;
  private redis = 0;

  constructor(
    private readonly serverPid: number,
    private readonly redisPid: number,
  ) {}

  start(): void {
    this.startedAt = performance.now();
    this.server = processCpuMicros(this.serverPid);
    this.redis = processCpuMicros(this.redisPid);
  }

  read(): CpuUse {
    return {
      server: processCpuMicros(this.serverPid) - this.server,
      redis: processCpuMicros(this.redisPid) - this.redis,
      windowMicros: (performance.now() - this.startedAt) * 1_000,
    };
  }
}

/** Share of one core. */
const share = (micros: number, use: CpuUse): number => micros / use.windowMicros;

/** The load process's line `msg`; its `failed` line (or its exit) fails the wait with its reason. */
async function fleetLine(fleet: JsonLinesProcess, msg: string, timeoutMs: number): Promise<JsonLine> {
  const line = await fleet.waitFor((l) => l['msg'] === msg || l['msg'] === 'failed', `"${msg}"`, timeoutMs);
  if (line['msg'] === 'failed') throw new Error(`the load process failed: ${String(line['reason'])}`);
  return line;
}

/** What one fleet measured: the load process's lines, and the server's and Redis's use of the machine. */
interface FleetFigures {
  registered: JsonLine;
  idleEnd: JsonLine;
  /** The load process's line (worker-fleet.ts prints it as a FlowEnd). */
  flow: FlowEnd;
  /** Server RSS after the fleet registered and beat, less before, in bytes. */
  rssGrowth: number;
  /** Before the fleet: the server and Redis idle. */
  bare: CpuUse;
  beats: CpuUse;
  flowing: CpuUse;
  /** Redis script calls in the beats-only window and while jobs flowed. */
  calls: { beats: number; flowing: number };
  /** The server's collections in the beats-only window and while jobs flowed. */
  gc: { beats: GcPauses; flowing: GcPauses };
  /**
   * While jobs flowed: how late the server's and the load process's event
   * loops ran, and the load process's collections (the deliveries are
   * timed in the load process, so its pauses are in the latency too).
   */
  flowingLoops: { server: LoopDelays; load: LoopDelays; loadGc: GcPauses };
}

/** NODE_OPTIONS that trace a process's collections and its event loop's lateness, after those the benchmark runs with. */
const TRACED_NODE_OPTIONS = [process.env['NODE_OPTIONS'], GC_TRACE_OPTIONS, LOOP_DELAY_TRACE_OPTIONS].filter(Boolean).join(' ');

/** One fleet against a fresh server process. */
async function measureFleet(redis: RedisServerProcess, shape: Shape): Promise<FleetFigures> {
  // The server and the load process print their collections and their loops' lateness (lines among their own), read window by window.
  return withServerProcess({ ...redisEnv(redis.port), NODE_OPTIONS: TRACED_NODE_OPTIONS }, async (server) => {
    const meter = new CpuMeter(server.pid, redis.pid!);
    meter.start();
    await pause(IDLE_MS);
    const bare = meter.read();
    const rssBefore = processRssBytes(server.pid);
    const plan: FleetPlan = {
      address: server.address,
      ...shape,
      run: `${shape.workers}x${shape.queues}`,
      workersPerConnection: WORKERS_PER_CONNECTION,
      idleMs: IDLE_MS,
      jobs: FLEET_JOBS,
      rate: FLEET_RATE,
      waitMs: WAIT_MS,
    };
    const fleet = new JsonLinesProcess(
      'the load process',
      process.execPath,
      [join(projectRoot(), 'dist', 'bench', 'worker-fleet.js'), JSON.stringify(plan)],
      { env: { ...process.env, NODE_OPTIONS: TRACED_NODE_OPTIONS } },
    );
    const untrack = track(() => fleet.kill());
    try {
      const registered = await fleetLine(fleet, 'registered', FLEET_STEP_MS);
      await fleetLine(fleet, 'idle-start', WAIT_MS);
      meter.start();
      resetRedisStats(redis.port);
      let linesRead = server.lines.length;
      const idleEnd = await fleetLine(fleet, 'idle-end', IDLE_MS + WAIT_MS);
      const beats = meter.read();
      const beatsGc = gcPausesSince(server.lines, linesRead);
      const beatCalls = redisScriptCalls(redis.port);
      const rssGrowth = processRssBytes(server.pid) - rssBefore;
      await fleetLine(fleet, 'flow-start', WAIT_MS);
      meter.start();
      resetRedisStats(redis.port);
      linesRead = server.lines.length;
      const loadLinesRead = fleet.lines.length;
      const flow = (await fleetLine(fleet, 'flow-end', FLEET_STEP_MS)) as JsonLine & FlowEnd;
      const flowing = meter.read();
      const calls = { beats: beatCalls, flowing: redisScriptCalls(redis.port) };
      const gc = { beats: beatsGc, flowing: gcPausesSince(server.lines, linesRead) };
      const flowingLoops = {
        server: loopDelaysSince(server.lines, linesRead),
        load: loopDelaysSince(fleet.lines, loadLinesRead),
        loadGc: gcPausesSince(fleet.lines, loadLinesRead),
      };
      return { registered, idleEnd, flow, rssGrowth, bare, beats, flowing, calls, gc, flowingLoops };
    } finally {
      await cleanUp(
        'the load process stopping',
        FLEET_STEP_MS,
        fleet.stop('SIGTERM', FLEET_STEP_MS).catch(() => fleet.kill()),
      );
      if (!fleet.isRunning) untrack();
    }
  });
}

/** Prints one fleet's figures. */
function printFleet(print: (line: string) => void, shape: Shape, figures: FleetFigures): void {
  const { registered, idleEnd, flow, rssGrowth, bare, beats, flowing, calls, gc, flowingLoops } = figures;
  // The beats go on while jobs flow: what they cost at idle is not the jobs'.
  const perJob = (of: 'server' | 'redis'): number =>
    Math.round((flowing[of] - share(beats[of], beats) * flowing.windowMicros) / FLEET_JOBS);
  const callsPerJob = (calls.flowing - (calls.beats / beats.windowMicros) * flowing.windowMicros) / FLEET_JOBS;
  const troubles = (['refusedAcks', 'reRegistrations', 'ackFailures'] as const)
    .filter((key) => flow[key] > 0)
    .map((key) => `${key} ${flow[key]}`);
  print(`  ${count(shape.workers)} workers on ${count(shape.queues)} queue(s)`);
  print(
    `    registered with their streams in ${(Number(registered['ms']) / 1000).toFixed(1)} s (${String(registered['connections'])} connections); server RSS ${rssGrowth >= 0 ? '+' : ''}${(rssGrowth / 2 ** 20).toFixed(0)} MB, ${(rssGrowth / shape.workers / 1024).toFixed(1)} KB per worker`,
  );
  print(
    `    beats only (${IDLE_MS / 1000} s, ${count(Number(idleEnd['beatAnswers']))} beats answered since the first registration): server ${pct(share(beats.server, beats))} of a core (no workers: ${pct(share(bare.server, bare))}), Redis ${pct(share(beats.redis, beats))} (no workers: ${pct(share(bare.redis, bare))}); ${((calls.beats * 1e6) / beats.windowMicros).toFixed(0)} Redis script calls a second; the server's collector: ${describePauses(gc.beats, beats.windowMicros / 1e6)}`,
  );
  print(
    `    ${count(FLEET_JOBS)} jobs flowing: beyond the beats', per job: CPU server ${perJob('server')} µs, Redis ${perJob('redis')} µs, ${callsPerJob.toFixed(2)} Redis script calls; enqueue -> delivery ${ms(flow)} (${withoutPauses(flow, "the load process's")})${troubles.length > 0 ? `; ${troubles.join(', ')}` : ''}; the server's collector meanwhile: ${describePauses(gc.flowing, flowing.windowMicros / 1e6)}`,
  );
  print(
    `    meanwhile, event loops: the server's ${describeLoopDelays(flowingLoops.server)}; the load process's ${describeLoopDelays(flowingLoops.load)}, its collector: ${describePauses(flowingLoops.loadGc, flowing.windowMicros / 1e6)}`,
  );
  for (const [problem, times] of Object.entries(flow.problems)) print(`    the workers logged ${times}x: ${problem}`);
}

/** The fleets measured: the one asked for, and the scale it is compared with (10 and 1,000 workers; 1,000 queues). */
function shapes(): Shape[] {
  const all: Shape[] = [
    { workers: Math.min(10, FLEET), queues: 1 },
    { workers: Math.min(1_000, FLEET), queues: 1 },
    { workers: Math.min(1_000, FLEET), queues: Math.min(1_000, FLEET) },
    { workers: FLEET, queues: 1 },
  ];
  return all.filter((shape, i) => all.findIndex((s) => s.workers === shape.workers && s.queues === shape.queues) === i);
}

export async function workersSection(phases: Phases): Promise<void> {
  const print = (line: string): void => phases.print(line);
  print(
    `\nWorkers on one replica (Redis): hand-written workers in a load process of their own, each with a Beat stream (at the interval the server announces, 5 s) and a Fetch stream, ${WORKERS_PER_CONNECTION} workers per connection; ${count(FLEET_JOBS)} jobs flow at ${count(FLEET_RATE)} a second, one per Enqueue call`,
  );
  await phases.run('workers', () =>
    withRedis(async (redis) => {
      for (const shape of shapes())
        await phases.run(`workers ${shape.workers} x ${shape.queues} queue(s)`, async () =>
          printFleet(print, shape, await measureFleet(redis, shape)),
        );
    }),
  );
}
