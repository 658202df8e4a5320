import { join } from 'node:path';
import { credentials, makeGenericClientConstructor, type Client, type ClientDuplexStream, type ServiceDefinition } from '@grpc/grpc-js';
import { createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { performance } from 'node:perf_hooks';
import { projectRoot } from '../src/project-root';
import { JsonLinesProcess } from '../tools/json-lines-process';
import { SERVER_NODE_FLAGS } from '../tools/server-process';
import { processCpuMicros, processRssBytes } from './cpu-accounting';
import { within, WAIT_MS } from './deadline';
import { GC_TRACE_OPTIONS, gcPausesSince, type GcPauses } from './gc-pauses';
import { pause } from '../lib/pause';
import { percentiles, type Percentiles } from './percentiles';
import { track } from './servers';
import { ECHO_SERVICE } from './bare-grpc-server';

/** A round trip's latency, and the CPU each side spent per call. */
export interface CallCost extends Percentiles {
  /** Calls measured. */
  calls: number;
  serverMicros: number;
  clientMicros: number;
}

/**
 * Runs `call` `count` times after `warmup`, back to back in each of
 * `inFlight` loops (one: each call finds the server idle): latency
 * percentiles and CPU per call of this process and `serverPid`.
 */
async function measureCalls(
  count: number,
  warmup: number,
  serverPid: number,
  call: () => Promise<unknown>,
  inFlight = 1,
): Promise<CallCost> {
  for (let i = 0; i < warmup; i++) await call();
  const samples: number[] = [];
  const server = processCpuMicros(serverPid);
  const client = process.cpuUsage();
  const loop = async (calls: number): Promise<void> => {
    for (let i = 0; i < calls; i++) {
      const started = performance.now();
      await call();
      samples.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, (_, i) => loop(Math.floor((count + i) / inFlight))));
  const used = process.cpuUsage(client);
  return {
    ...percentiles(samples),
    calls: samples.length,
    serverMicros: (processCpuMicros(serverPid) - server) / samples.length,
    clientMicros: (used.user + used.system) / samples.length,
  };
}

/** A running bench server process (bench/bare-grpc-server.ts, say): its port and PID, and its lines (its collector's pauses among them). */
interface BenchServer {
  port: number;
  pid: number;
  lines: JsonLinesProcess['lines'];
}

/** The library a bare server answers with: grpc-js alone, or nice-grpc over it (as the OJS server does). */
export type BareLibrary = 'grpc-js' | 'nice-grpc';

/**
 * Runs `use` once `script` (a file of dist/bench that prints its port as
 * it listens) runs as a process of its own with `args`, under the server's
 * Node flags; the process is killed by its PID whatever happens.
 */
export async function withBenchServer<T>(
  name: string,
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  use: (server: BenchServer) => Promise<T>,
): Promise<T> {
  const server = new JsonLinesProcess(
    name,
    process.execPath,
    [...SERVER_NODE_FLAGS, join(projectRoot(), 'dist', 'bench', script), ...args],
    {
      env,
    },
  );
  const untrack = track(() => server.kill());
  try {
    const { port } = (await server.waitFor((line) => line['msg'] === 'listening', 'that it listens', 10_000)) as { port: number };
    return await use({ port, pid: server.pid, lines: server.lines });
  } finally {
    await server.kill();
    untrack();
  }
}

/**
 * Runs `use` with a bare gRPC server process of its own. It prints its
 * collector's pauses as the server does in the workers section: what the
 * transport alone costs the collector is then compared like for like.
 */
const withBareServer = <T>(library: BareLibrary, use: (server: BenchServer) => Promise<T>): Promise<T> =>
  withBenchServer(
    `the bare gRPC server (${library})`,
    'bare-grpc-server.js',
    [library],
    { ...process.env, NODE_OPTIONS: [process.env['NODE_OPTIONS'], GC_TRACE_OPTIONS].filter(Boolean).join(' ') },
    use,
  );

/** The bare server's methods as a generic client sees them (bytes in, bytes out). */
interface EchoClient {
  echo(bytes: Buffer, callback: BytesCallback): void;
  stream(): ClientDuplexStream<Buffer, Buffer>;
  close(): void;
}

/**
 * A generic client of a bench service at `port`, on a connection of its
 * own: channels to one address are otherwise shared. Its methods are
 * untyped: the caller names them (EchoClient, say).
 */
export function bytesClient(service: ServiceDefinition, name: string, port: number): Client {
  const Constructor = makeGenericClientConstructor(service, name);
  return new Constructor(`127.0.0.1:${port}`, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
}

const echoClient = (port: number): EchoClient => bytesClient(ECHO_SERVICE, 'Echo', port) as unknown as EchoClient;

/** How a generic client answers a unary call of bytes. */
export type BytesCallback = (error: Error | null, answer?: Buffer) => void;

/** A unary call of bytes made by `send`, answered with its answer's text. */
export const bytesCall = (send: (bytes: Buffer, callback: BytesCallback) => void, bytes: Buffer): Promise<string> =>
  new Promise((resolve, reject) => send(bytes, (error, answer) => (error === null ? resolve(answer!.toString()) : reject(error))));

/**
 * The transport's floor on this machine: a unary round trip of grpc-js
 * alone (bench/bare-grpc-server.ts, a client with no middleware), against
 * which the server's own Health/Check (nice-grpc, its middleware, health)
 * reads. With `inFlight` calls under way at once the server finds many
 * calls each time it wakes: what a call costs it then, against one at a
 * time, is what waking up for a call costs on this machine.
 */
export function bareUnaryCost(count: number, inFlight = 1): Promise<CallCost> {
  return withBareServer('grpc-js', async ({ port, pid }) => {
    const client = echoClient(port);
    const bytes = Buffer.from('ping');
    try {
      return await measureCalls(
        count,
        Math.min(1_000, count),
        pid,
        () => bytesCall((request, callback) => client.echo(request, callback), bytes),
        inFlight,
      );
    } finally {
      client.close();
    }
  });
}

/** The shape of a fleet's streams, as BENCH_ONLY=workers opens them: two per worker, one of them beating. */
export interface StreamsPlan {
  /** Open streams; each sends one message when it opens. */
  streams: number;
  /** Of those, how many send a message every `intervalMs`, spread evenly over the interval. */
  beating: number;
  intervalMs: number;
  /** Streams per connection. */
  perConnection: number;
  /** How long CPU is measured, after one interval in which every beating stream sent once. */
  windowMs: number;
}

/** What the bare server spent on streams like a fleet's. */
export interface StreamsCost {
  /** Messages it answered a second in the window. */
  answeredPerSecond: number;
  /** Its CPU in the window, as a share of one core. */
  cpuShare: number;
  /** Its CPU per message answered. */
  microsPerMessage: number;
  /** Its RSS with every stream open, less before any opened, per stream. */
  rssPerStreamBytes: number;
  /** Its collector's pauses in the window. */
  gc: GcPauses;
}

/**
 * The transport's floor for a fleet of workers: what a bare server spends
 * to hold `streams` bidirectional streams open and answer the messages of
 * `beating` of them, each one message every interval, as the worker fleet
 * of BENCH_ONLY=workers holds a Fetch and a Beat stream per worker and
 * beats on one. Nothing of OJS runs: no protobuf, no store, no handler
 * work; on nice-grpc, one middleware layer that passes messages through.
 */
export function bareStreamsCost(library: BareLibrary, plan: StreamsPlan): Promise<StreamsCost> {
  return withBareServer(library, async ({ port, pid, lines }) => {
    const rssBefore = processRssBytes(pid);
    const clients = Array.from({ length: Math.ceil(plan.streams / plan.perConnection) }, () => echoClient(port));
    const timers: NodeJS.Timeout[] = [];
    const streams: ClientDuplexStream<Buffer, Buffer>[] = [];
    let answered = 0;
    let streamsAnswered = 0;
    let everyStreamAnswered!: () => void;
    const opened = new Promise<void>((resolve) => (everyStreamAnswered = resolve));
    const beat = Buffer.from('beat');
    try {
      for (let i = 0; i < plan.streams; i++) {
        const stream = clients[Math.floor(i / plan.perConnection)]!.stream();
        stream.on('data', () => {
          answered++;
        });
        stream.once('data', () => {
          if (++streamsAnswered === plan.streams) everyStreamAnswered();
        });
        // A cancelled stream ends with an error event: without a listener it would be thrown.
        stream.on('error', () => {});
        stream.write(beat);
        streams.push(stream);
      }
      streams.slice(0, plan.beating).forEach((stream, i) => {
        const first = setTimeout(
          () => {
            stream.write(beat);
            timers.push(setInterval(() => stream.write(beat), plan.intervalMs));
          },
          (i * plan.intervalMs) / plan.beating,
        );
        timers.push(first);
      });
      await within('every stream to be answered', WAIT_MS, opened);
      await pause(plan.intervalMs);
      const cpuBefore = processCpuMicros(pid);
      const answeredBefore = answered;
      const linesBefore = lines.length;
      const started = performance.now();
      await pause(plan.windowMs);
      const windowMicros = (performance.now() - started) * 1_000;
      const cpu = processCpuMicros(pid) - cpuBefore;
      const messages = answered - answeredBefore;
      return {
        answeredPerSecond: (messages * 1e6) / windowMicros,
        cpuShare: cpu / windowMicros,
        microsPerMessage: cpu / Math.max(1, messages),
        rssPerStreamBytes: (processRssBytes(pid) - rssBefore) / plan.streams,
        gc: gcPausesSince(lines, linesBefore),
      };
    } finally {
      for (const timer of timers) clearTimeout(timer);
      for (const stream of streams) stream.cancel();
      for (const client of clients) client.close();
    }
  });
}

/** The server's Health/Check, measured as the bare round trip is. */
export async function healthCheckCost(address: string, serverPid: number, count: number): Promise<CallCost> {
  const channel = createChannel(address);
  const health = createClient(HealthDefinition, channel);
  try {
    return await measureCalls(count, Math.min(1_000, count), serverPid, () => health.check({ service: '' }));
  } finally {
    channel.close();
  }
}
