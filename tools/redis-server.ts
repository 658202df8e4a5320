import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stopChild } from './stop-child';

const run = promisify(execFile);

/** A port that was free a moment ago (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface RedisServerOptions {
  /** Append-only file, so that what Redis acknowledged survives a restart. */
  appendonly?: boolean;
  cluster?: boolean;
  port?: number;
  /** Clients must authenticate with this password (requirepass); `url` then carries it. */
  password?: string;
  /**
   * A command the server runs under, such as valgrind's: redis-server and
   * its own arguments follow the command's. `pid` is the started process's.
   */
  runUnder?: readonly [string, ...string[]];
}

/**
 * A redis-server process of the test's own, on 127.0.0.1 and a free port,
 * with its data in a temporary directory. It is stopped by its own PID.
 */
export class RedisServerProcess {
  private child: ChildProcess | undefined;
  private isPaused = false;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly options: RedisServerOptions,
  ) {}

  static async start(options: RedisServerOptions = {}): Promise<RedisServerProcess> {
    const server = new RedisServerProcess(options.port ?? (await freePort()), mkdtempSync(join(tmpdir(), 'ojs-redis-')), options);
    await server.launch();
    return server;
  }

  get url(): string {
    const auth = this.options.password === undefined ? '' : `:${encodeURIComponent(this.options.password)}@`;
    return `redis://${auth}127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Freezes the process (SIGSTOP): it keeps its connections open and answers
   * nothing, like a stuck or overloaded server. stop() and destroy() resume
   * it first, so a paused server never outlives its test.
   */
  pause(): void {
    if (this.child?.pid === undefined) throw new Error(`redis-server on port ${this.port} is not running`);
    process.kill(this.child.pid, 'SIGSTOP');
    this.isPaused = true;
  }

  /** Lets a paused process run again (SIGCONT). */
  resume(): void {
    if (!this.isPaused || this.child?.pid === undefined) return;
    process.kill(this.child.pid, 'SIGCONT');
    this.isPaused = false;
  }

  /** Stops the process (SIGTERM, or SIGKILL to simulate a crash) and waits for it to exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    // A stopped process would not act on the signal before it runs again.
    this.resume();
    const child = this.child;
    this.child = undefined;
    await stopChild(child, signal);
  }

  /**
   * Stops the server (SIGKILL to simulate a crash: only what it wrote to its
   * append-only file survives) and starts it again, on the same port and
   * data directory.
   */
  async restart(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await this.stop(signal);
    await this.launch();
  }

  /** Starts the server again after stop(), on the same port and data directory. */
  async startAgain(): Promise<void> {
    if (this.child !== undefined) throw new Error(`redis-server on port ${this.port} is already running`);
    await this.launch();
  }

  /** Stops the server (SIGKILL when it must go at once) and removes its data directory. */
  async destroy(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await this.stop(signal);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Runs redis-cli against this server. */
  async cli(...args: string[]): Promise<string> {
    const auth = this.options.password === undefined ? [] : ['--no-auth-warning', '-a', this.options.password];
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(this.port), ...auth, ...args]);
    return stdout.trim();
  }

  private async launch(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--save',
      '',
      '--appendonly',
      this.options.appendonly === true ? 'yes' : 'no',
      '--appendfsync',
      'always',
      '--daemonize',
      'no',
    ];
    if (this.options.password !== undefined) args.push('--requirepass', this.options.password);
    if (this.options.cluster === true) args.push('--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${this.port}.conf`);
    const [command, ...commandArgs] = [...(this.options.runUnder ?? []), 'redis-server', ...args];
    const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      let output = '';
      child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) resolve();
      });
    });
  }
}

/** A three-master Redis Cluster of the test's own, built with redis-cli --cluster create. */
export class RedisClusterProcesses {
  private constructor(readonly nodes: RedisServerProcess[]) {}

  static async start(): Promise<RedisClusterProcesses> {
    const nodes = await Promise.all([0, 1, 2].map(() => RedisServerProcess.start({ cluster: true })));
    const cluster = new RedisClusterProcesses(nodes);
    await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes']);
    await cluster.waitUntilOk();
    return cluster;
  }

  get url(): string {
    return `redis+cluster://${this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`;
  }

  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.destroy()));
  }

  /** Waits (asking, not sleeping between identical answers needlessly) until every node agrees the cluster is ok. */
  private async waitUntilOk(): Promise<void> {
    for (let attempt = 0; attempt < 200; attempt++) {
      const infos = await Promise.all(this.nodes.map((n) => n.cli('cluster', 'info')));
      if (infos.every((info) => info.includes('cluster_state:ok'))) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the Redis cluster did not reach cluster_state:ok');
  }
}

/** A key prefix of its own for one test, so tests share a Redis without seeing each other's keys. */
export function testPrefix(): string {
  return `{t-${randomUUID().slice(0, 8)}}`;
}
