import { join } from 'node:path';
import { credentials, makeGenericClientConstructor } from '@grpc/grpc-js';
import { createChannel, createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { performance } from 'node:perf_hooks';
import { projectRoot } from '../src/project-root';
import { JsonLinesProcess } from '../tools/json-lines-process';
import { processCpuMicros } from './cpu-accounting';
import { percentiles, type Percentiles } from './percentiles';
import { track } from './servers';
import { ECHO_SERVICE } from './bare-grpc-server';

/** A round trip's latency, and the CPU each side spent per call. */
export interface CallCost extends Percentiles {
  serverMicros: number;
  clientMicros: number;
}

/** Runs `call` back to back, `count` times after `warmup`: latency percentiles and CPU per call of this process and `serverPid`. */
async function measureCalls(count: number, warmup: number, serverPid: number, call: () => Promise<unknown>): Promise<CallCost> {
  for (let i = 0; i < warmup; i++) await call();
  const samples: number[] = [];
  const server = processCpuMicros(serverPid);
  const client = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await call();
    samples.push(performance.now() - started);
  }
  const used = process.cpuUsage(client);
  return {
    ...percentiles(samples),
    serverMicros: (processCpuMicros(serverPid) - server) / count,
    clientMicros: (used.user + used.system) / count,
  };
}

/**
 * The transport's floor on this machine: a unary round trip of grpc-js
 * alone (bench/bare-grpc-server.ts, a client with no middleware), against
 * which the server's own Health/Check (nice-grpc, its middleware, health)
 * reads.
 */
export async function bareUnaryCost(count: number): Promise<CallCost> {
  const server = new JsonLinesProcess('the bare gRPC server', process.execPath, [
    join(projectRoot(), 'dist', 'bench', 'bare-grpc-server.js'),
  ]);
  const untrack = track(() => server.kill());
  try {
    const { port } = (await server.waitFor((line) => line['msg'] === 'listening', 'that it listens', 10_000)) as { port: number };
    const Client = makeGenericClientConstructor(ECHO_SERVICE, 'Echo');
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as {
      echo(bytes: Buffer, callback: (error: Error | null) => void): void;
      close(): void;
    };
    const bytes = Buffer.from('ping');
    try {
      return await measureCalls(
        count,
        Math.min(1_000, count),
        server.pid,
        () => new Promise<void>((resolve, reject) => client.echo(bytes, (error) => (error === null ? resolve() : reject(error)))),
      );
    } finally {
      client.close();
    }
  } finally {
    await server.kill();
    untrack();
  }
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
