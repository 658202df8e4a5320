import { Server, ServerCredentials, type MethodDefinition as GrpcJsMethod, type ServerDuplexStream } from '@grpc/grpc-js';
import { createServer, type MethodDefinition } from 'nice-grpc';

/**
 * A gRPC server with nothing of OJS in it, for the benchmark's floors
 * (bench/grpc-floors.ts): a unary method that answers its request's bytes
 * as they came, and a bidirectional stream that answers each message so, as
 * a Beat stream answers each beat. On grpc-js alone (no middleware, no
 * protobuf), or with `nice-grpc` as its argument through nice-grpc, the
 * library the OJS server is built on, with one pass-through middleware
 * layer as the server has. It prints its port and serves until killed.
 */
const identity = (bytes: Buffer): Buffer => bytes;

/** A method of bytes in and bytes out, in the shape both grpc-js and nice-grpc take. */
export const bytesMethod = <Stream extends boolean>(
  path: string,
  stream: Stream,
): MethodDefinition<Buffer, Buffer, Buffer, Buffer, Stream, Stream> & GrpcJsMethod<Buffer, Buffer> => ({
  path,
  requestStream: stream,
  responseStream: stream,
  requestSerialize: identity,
  requestDeserialize: identity,
  responseSerialize: identity,
  responseDeserialize: identity,
  options: {},
});

export const ECHO_SERVICE = {
  echo: bytesMethod('/bench.Echo/Echo', false),
  stream: bytesMethod('/bench.Echo/Stream', true),
};

/** As many streams on a connection as the OJS server lets one carry by default. */
const OPTIONS = { 'grpc.max_concurrent_streams': 1_000 };

function listening(port: number): void {
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port })}\n`);
}

function serveOnGrpcJs(): void {
  const server = new Server(OPTIONS);
  server.addService(ECHO_SERVICE, {
    echo: (call: { request: Buffer }, callback: (error: null, bytes: Buffer) => void) => callback(null, call.request),
    stream: (call: ServerDuplexStream<Buffer, Buffer>) => {
      call.on('data', (bytes: Buffer) => call.write(bytes));
      call.on('end', () => call.end());
    },
  });
  server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) => {
    if (error !== null) throw error;
    listening(port);
  });
}

async function serveOnNiceGrpc(): Promise<void> {
  const server = createServer(OPTIONS).use(async function* passThrough(call, context) {
    return yield* call.next(call.request, context);
  });
  server.add(ECHO_SERVICE, {
    echo: async (bytes: Buffer) => bytes,
    async *stream(messages: AsyncIterable<Buffer>) {
      yield* messages;
    },
  });
  listening(await server.listen('127.0.0.1:0'));
}

if (require.main === module) {
  if (process.argv[2] === 'nice-grpc') void serveOnNiceGrpc();
  else serveOnGrpcJs();
}
