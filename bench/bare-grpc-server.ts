import { Server, ServerCredentials, type ServerDuplexStream, type ServiceDefinition } from '@grpc/grpc-js';

/**
 * A gRPC server with nothing of OJS in it, for the benchmark's floors
 * (bench/grpc-floors.ts), on grpc-js alone (no nice-grpc, no middleware,
 * no protobuf): a unary method that answers its request's bytes as they
 * came, and a bidirectional stream that answers each message so, as a Beat
 * stream answers each beat. It prints its port and serves until killed.
 */
const identity = (bytes: Buffer): Buffer => bytes;

const bytesMethod = (path: string, stream: boolean) => ({
  path,
  requestStream: stream,
  responseStream: stream,
  requestSerialize: identity,
  requestDeserialize: identity,
  responseSerialize: identity,
  responseDeserialize: identity,
});

export const ECHO_SERVICE: ServiceDefinition = {
  echo: bytesMethod('/bench.Echo/Echo', false),
  stream: bytesMethod('/bench.Echo/Stream', true),
};

if (require.main === module) {
  // As many streams on a connection as the OJS server lets one carry by default.
  const server = new Server({ 'grpc.max_concurrent_streams': 1_000 });
  server.addService(ECHO_SERVICE, {
    echo: (call: { request: Buffer }, callback: (error: null, bytes: Buffer) => void) => callback(null, call.request),
    stream: (call: ServerDuplexStream<Buffer, Buffer>) => {
      call.on('data', (bytes: Buffer) => call.write(bytes));
      call.on('end', () => call.end());
    },
  });
  server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) => {
    if (error !== null) throw error;
    process.stdout.write(`${JSON.stringify({ msg: 'listening', port })}\n`);
  });
}
