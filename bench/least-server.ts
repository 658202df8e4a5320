import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Server, ServerCredentials, type sendUnaryData, type ServerUnaryCall, type ServerWritableStream } from '@grpc/grpc-js';
import { Redis } from 'ioredis';
import { uuidv7 } from 'uuidv7';
import { projectRoot } from '../src/project-root';
import { bytesMethod } from './bare-grpc-server';

/**
 * The least job server, for the benchmark's floor under the server's CPU
 * per job (bench/least-server-floor.ts): grpc-js alone and ioredis over the
 * least Redis functions with one record per job
 * (bench/minimal-lifecycle.lua), and nothing else. Producers enqueue
 * batches, workers take jobs on a server stream as their credit allows and
 * acknowledge them in batches, as in the batched load; but no protobuf, no
 * validation, no envelope (a job is its id and its stored body, both given
 * by the producer), no events, telemetry or logs, no beats, and no
 * handling of failure: what any server built this way pays per job on this
 * machine before it does a job server's work. It prints its port and
 * serves until killed.
 *
 * Messages are text: records separated by RS (\x1e), fields by US (\x1f).
 *   Enqueue: id, body per record.                  Answers the count.
 *   Fetch:   worker id, credit (one record).       Streams the nonce, then id, attempt, body per record.
 *   Ack:     worker id, then id, token per record.  Answers the count completed; returns the credit.
 */
const RS = '\x1e';
const US = '\x1f';
const PREFIX = '{least}:';
/** Jobs per claim at most, as the OJS server delivers in one Fetch message (the workers' credit binds first here). */
const CLAIM_MAX = 500;

export const LEAST_SERVICE = {
  enqueue: bytesMethod('/bench.Least/Enqueue', false),
  // A server stream: one request, then messages.
  fetch: { ...bytesMethod('/bench.Least/Fetch', false), responseStream: true },
  ack: bytesMethod('/bench.Least/Ack', false),
};
export const LEAST_SEPARATORS = { RS, US };

/** A worker's open Fetch stream: how many more jobs it takes, and whether a claim for it is under way. */
interface FetchStream {
  workerId: string;
  call: ServerWritableStream<Buffer, Buffer>;
  credit: number;
  claiming: boolean;
  /** Claim (again) once the claim under way, if any, is written: set by a wake-up, and by a claim that found jobs. */
  again: boolean;
  open: boolean;
}

/** Answers a unary call with the text `work` ends with, or with its error. */
async function answer(callback: sendUnaryData<Buffer>, work: Promise<string>): Promise<void> {
  let text: string;
  try {
    text = await work;
  } catch (error) {
    callback(error as Error);
    return;
  }
  callback(null, Buffer.from(text));
}

async function serve(redisUrl: string): Promise<void> {
  const redis = new Redis(redisUrl);
  await redis.call('function', 'load', 'replace', readFileSync(join(projectRoot(), 'bench', 'minimal-lifecycle.lua'), 'utf8'));
  const streams = new Map<string, FetchStream>();

  const claim = async (stream: FetchStream): Promise<void> => {
    const nonce = uuidv7();
    const max = Math.min(stream.credit, CLAIM_MAX);
    const claimed = (await redis.call('fcall', 'minimal_claim', 1, PREFIX, Date.now(), stream.workerId, max, nonce)) as string[][];
    if (claimed.length === 0 || !stream.open) return;
    stream.credit -= claimed.length;
    stream.again = true;
    let message = nonce;
    for (const [id, attempt, body] of claimed) message += `${RS}${id}${US}${attempt}${US}${body}`;
    stream.call.write(Buffer.from(message));
  };

  /** Claims for `stream` while it has credit and jobs come; a wake-up during a claim is not lost. */
  const pump = async (stream: FetchStream): Promise<void> => {
    if (stream.claiming) {
      stream.again = true;
      return;
    }
    stream.claiming = true;
    try {
      while (stream.again && stream.open && stream.credit > 0) {
        stream.again = false;
        await claim(stream);
      }
    } finally {
      stream.claiming = false;
    }
  };
  const wake = (stream: FetchStream): void => {
    stream.again = true;
    void pump(stream);
  };

  const enqueue = async (request: Buffer): Promise<string> => {
    const records = request.toString().split(RS);
    const args: string[] = [String(records.length)];
    const ids: string[] = [];
    for (const record of records) {
      const separator = record.indexOf(US);
      const id = record.slice(0, separator);
      ids.push(id);
      args.push(id, record.slice(separator + 1));
    }
    args.push(`${Date.now()}${US}${ids.join(RS)}`);
    const count = await redis.call('fcall', 'minimal_enqueue', 1, PREFIX, ...args);
    for (const stream of streams.values()) wake(stream);
    return String(count);
  };

  const ack = async (request: Buffer): Promise<string> => {
    const [workerId, ...records] = request.toString().split(RS) as [string, ...string[]];
    const args: string[] = [String(Date.now()), workerId, String(records.length)];
    for (const record of records) args.push(...record.split(US));
    const count = await redis.call('fcall', 'minimal_ack', 1, PREFIX, ...args);
    const stream = streams.get(workerId);
    if (stream !== undefined) {
      stream.credit += records.length;
      wake(stream);
    }
    return String(count);
  };

  const server = new Server({ 'grpc.max_concurrent_streams': 1_000 });
  server.addService(LEAST_SERVICE, {
    enqueue: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => void answer(callback, enqueue(call.request)),
    fetch: (call: ServerWritableStream<Buffer, Buffer>) => {
      const [workerId, credit] = call.request.toString().split(US) as [string, string];
      const stream: FetchStream = { workerId, call, credit: Number(credit), claiming: false, again: true, open: true };
      streams.set(workerId, stream);
      call.on('cancelled', () => {
        stream.open = false;
        streams.delete(workerId);
      });
      void pump(stream);
    },
    ack: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => void answer(callback, ack(call.request)),
  });
  server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) => {
    if (error !== null) throw error;
    process.stdout.write(`${JSON.stringify({ msg: 'listening', port })}\n`);
  });
}

if (require.main === module) void serve(process.argv[2]!);
