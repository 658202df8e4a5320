import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/** The fixed part of every HTTP/2 frame (RFC 9113 section 4.1). */
export interface FrameHeader {
  length: number;
  type: number;
  flags: number;
  streamId: number;
}

const FRAME_HEADER_BYTES = 9;
const HEADERS_FRAME = 1;

/**
 * Finds the frame headers in one direction of an HTTP/2 connection, however
 * the bytes are split into chunks. The server-to-client direction starts
 * with a frame (only clients send the connection preface), so a scanner
 * made for it is in step from the first byte.
 */
export class FrameScanner {
  private partial = Buffer.alloc(0);
  private payloadLeft = 0;

  /** The headers of the frames that begin in `chunk`, in order. */
  *scan(chunk: Buffer): Generator<FrameHeader> {
    let at = 0;
    while (at < chunk.length) {
      if (this.payloadLeft > 0) {
        const skipped = Math.min(this.payloadLeft, chunk.length - at);
        at += skipped;
        this.payloadLeft -= skipped;
        continue;
      }
      const taken = chunk.subarray(at, at + FRAME_HEADER_BYTES - this.partial.length);
      at += taken.length;
      this.partial = Buffer.concat([this.partial, taken]);
      if (this.partial.length < FRAME_HEADER_BYTES) return;
      const header = this.partial;
      this.partial = Buffer.alloc(0);
      this.payloadLeft = header.readUIntBE(0, 3);
      yield { length: this.payloadLeft, type: header[3]!, flags: header[4]!, streamId: header.readUInt32BE(5) & 0x7fffffff };
    }
  }
}

/**
 * A TCP proxy in front of a gRPC server that loses an answer on purpose: the
 * network fault of a call that took effect on the server while its answer
 * never reached the client. Armed, it cuts the connection carrying the next
 * answer (both sockets destroyed, the client's with a reset) the moment the
 * server starts answering a call, that is when a HEADERS frame arrives on a
 * client-initiated (odd) stream. A unary call's handler has finished by
 * then, so its effect is stored and its answer lost; the client sees
 * UNAVAILABLE. Every other byte, and every connection after the cut, is
 * forwarded as it is.
 */
export class CuttingProxy {
  private readonly sockets = new Set<Socket>();
  private armed: (() => void) | undefined;

  private constructor(
    private readonly server: Server,
    private readonly target: { host: string; port: number },
  ) {}

  /** Listens on 127.0.0.1 with an ephemeral port, forwarding to `target` (host:port). */
  static async start(target: string): Promise<CuttingProxy> {
    const separator = target.lastIndexOf(':');
    const server = createServer();
    const proxy = new CuttingProxy(server, { host: target.slice(0, separator), port: Number(target.slice(separator + 1)) });
    server.on('connection', (client) => proxy.forward(client));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return proxy;
  }

  get address(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Arms the proxy; resolves once it has cut the connection of the next answered call. */
  cutNextAnswer(): Promise<void> {
    if (this.armed !== undefined) throw new Error('the proxy is armed already');
    return new Promise((resolve) => (this.armed = resolve));
  }

  /** Stops listening and drops every connection. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
    await once(this.server, 'close');
  }

  private forward(client: Socket): void {
    const upstream = connect(this.target);
    this.track(client, upstream);
    this.track(upstream, client);
    client.pipe(upstream);
    const frames = new FrameScanner();
    upstream.on('data', (chunk: Buffer) => {
      if (this.isCutDue(frames, chunk)) {
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      if (!client.write(chunk)) {
        upstream.pause();
        client.once('drain', () => upstream.resume());
      }
    });
  }

  /** Whether this chunk from the server starts an answer while the proxy is armed; disarms if so. */
  private isCutDue(frames: FrameScanner, chunk: Buffer): boolean {
    let isAnswer = false;
    // Scanned to the end even when not armed: the scanner must stay in step with the frames.
    for (const frame of frames.scan(chunk)) isAnswer ||= frame.type === HEADERS_FRAME && frame.streamId % 2 === 1;
    const cut = this.armed;
    if (!isAnswer || cut === undefined) return false;
    this.armed = undefined;
    cut();
    return true;
  }

  /** Keeps `socket` for close(); a socket that fails or ends takes its peer down with it. */
  private track(socket: Socket, peer: Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => peer.destroy());
    socket.on('close', () => {
      this.sockets.delete(socket);
      peer.destroy();
    });
  }
}
