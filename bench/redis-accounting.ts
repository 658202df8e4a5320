import { createConnection, createServer, type Server } from 'node:net';
import { execFileSync } from 'node:child_process';

/** Calls Redis counted in INFO commandstats for the commands whose names `command` matches (a regex source). */
function callsOf(port: number, command: string): number {
  const stats = execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'info', 'commandstats']).toString();
  let total = 0;
  for (const match of stats.matchAll(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'gm'))) total += Number(match[1]);
  return total;
}

/** Total commands Redis executed (scripts' inner calls included), from INFO commandstats. */
export function redisCommandsExecuted(port: number): number {
  return callsOf(port, '(?!info|config)[^:]+');
}

/** Script calls Redis ran (FCALL and FCALL_RO): the store's round trips, pub/sub aside. */
export function redisScriptCalls(port: number): number {
  return callsOf(port, 'fcall(?:_ro)?');
}

export function resetRedisStats(port: number): void {
  execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'config', 'resetstat']);
}

/**
 * A TCP proxy in front of Redis that counts the commands clients send (a
 * script call is one, a pipeline of N is N): an upper bound on round trips,
 * unlike INFO, which also counts what scripts do inside Redis.
 */
export class CountingRedisProxy {
  requests = 0;
  private constructor(private readonly server: Server) {}

  static async start(redisPort: number): Promise<CountingRedisProxy> {
    let proxy: CountingRedisProxy | undefined;
    const server = createServer((client) => {
      const upstream = createConnection(redisPort, '127.0.0.1');
      const parser = new RespCommandCounter(() => proxy!.requests++);
      client.on('data', (chunk: Buffer) => {
        parser.feed(chunk);
        upstream.write(chunk);
      });
      upstream.pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new CountingRedisProxy(server);
    return proxy;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  close(): void {
    this.server.close();
  }
}

/** Counts top-level RESP arrays (commands) in a client's byte stream, skipping bulk payloads. */
class RespCommandCounter {
  private buffer = Buffer.alloc(0);
  private remainingItems = 0;

  constructor(private readonly onCommand: () => void) {}

  feed(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const lineEnd = this.buffer.indexOf('\r\n');
      if (lineEnd < 0) return;
      const line = this.buffer.subarray(0, lineEnd).toString();
      if (line.startsWith('*') && this.remainingItems === 0) {
        this.remainingItems = Number(line.slice(1));
        this.onCommand();
        this.buffer = this.buffer.subarray(lineEnd + 2);
      } else if (line.startsWith('$')) {
        const length = Number(line.slice(1));
        if (this.buffer.length < lineEnd + 2 + length + 2) return;
        this.buffer = this.buffer.subarray(lineEnd + 2 + length + 2);
        this.remainingItems -= 1;
      } else {
        this.buffer = this.buffer.subarray(lineEnd + 2);
      }
    }
  }
}
