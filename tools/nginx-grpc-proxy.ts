import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pause } from '../lib/pause';
import { freePort } from './redis-server';
import { stopChild } from './stop-child';

/** Debian installs nginx in /usr/sbin, which is not on every user's PATH. */
const NGINX = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';

export interface NginxGrpcProxyOptions {
  /** host:port of every upstream server; ones not listening yet are skipped until they are. */
  upstreams: string[];
  /**
   * How long the proxy lets a stream, or an idle client connection, go
   * without a byte before it closes it (its read, send, body and keepalive
   * timeouts), in whole seconds.
   */
  idleTimeoutSeconds: number;
}

/**
 * nginx as an L7 gRPC proxy (grpc_pass over HTTP/2 to plaintext upstreams)
 * in front of server replicas, the way a deployment puts one in front of
 * them. It runs in the foreground as a single process on 127.0.0.1 and a
 * free port, with its configuration, pid file, logs and temporary files in a
 * directory of its own, and is stopped by its own PID. It can be stopped and
 * started again on the same port.
 */
export class NginxGrpcProxy {
  private child: ChildProcess | undefined;
  private stderr = '';

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(options: NginxGrpcProxyOptions): Promise<NginxGrpcProxy> {
    const proxy = new NginxGrpcProxy(await freePort(), mkdtempSync(join(tmpdir(), 'ojs-nginx-')));
    writeFileSync(proxy.configFile, proxy.config(options));
    await proxy.launch();
    return proxy;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Stops the process (SIGTERM: nginx closes every connection at once) and waits for it to exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    await stopChild(child, signal);
  }

  /** Starts the proxy again after stop(), on the same port and configuration. */
  async startAgain(): Promise<void> {
    if (this.child !== undefined) throw new Error(`nginx on port ${this.port} is already running`);
    await this.launch();
  }

  async destroy(): Promise<void> {
    await this.stop('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** nginx's error log, for failure messages. */
  errorLog(): string {
    const file = join(this.dir, 'error.log');
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  }

  private get configFile(): string {
    return join(this.dir, 'nginx.conf');
  }

  private config({ upstreams, idleTimeoutSeconds }: NginxGrpcProxyOptions): string {
    const temp = join(this.dir, 'temp');
    mkdirSync(temp);
    const idle = `${idleTimeoutSeconds}s`;
    return `
daemon off;
master_process off;
pid ${join(this.dir, 'nginx.pid')};
error_log ${join(this.dir, 'error.log')} notice;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${temp}/body;
  proxy_temp_path ${temp}/proxy;
  fastcgi_temp_path ${temp}/fastcgi;
  uwsgi_temp_path ${temp}/uwsgi;
  scgi_temp_path ${temp}/scgi;
  upstream replicas {
    # max_fails=0: a replica that refused a connection is tried again on the next stream (it may have started since).
${upstreams.map((address) => `    server ${address} max_fails=0;`).join('\n')}
  }
  server {
    listen 127.0.0.1:${this.port} http2;
    # An idle client connection, and a stream whose client or upstream stays silent, are closed after this.
    keepalive_timeout ${idle};
    client_body_timeout ${idle};
    send_timeout ${idle};
    location / {
      grpc_pass grpc://replicas;
      grpc_read_timeout ${idle};
      grpc_send_timeout ${idle};
      grpc_next_upstream error timeout;
    }
  }
}
`;
  }

  private async launch(): Promise<void> {
    this.stderr = '';
    const child = spawn(NGINX, ['-p', this.dir, '-c', this.configFile, '-e', join(this.dir, 'error.log')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.child = child;
    child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // nginx says nothing when it is ready: it is once its port accepts connections.
    for (let attempt = 0; attempt < 200; attempt++) {
      if (child.exitCode !== null || child.signalCode !== null) break;
      if (await accepts(this.port)) return;
      await Promise.race([pause(25), exited]);
    }
    await this.stop('SIGKILL');
    throw new Error(`nginx did not start on port ${this.port}:\n${this.stderr}\n${this.errorLog()}`);
  }
}

/** Whether a TCP connection to 127.0.0.1:`port` is accepted. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
