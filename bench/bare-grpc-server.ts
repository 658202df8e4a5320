import { Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';

/**
 * A gRPC server with nothing of OJS in it, for the benchmark's floor
 * (bench/grpc-floors.ts): one unary method that answers its request's
 * bytes as they came, on grpc-js alone (no nice-grpc, no middleware, no
 * protobuf). It prints its port and serves until killed.
 */
const identity = (bytes: Buffer): Buffer => bytes;

export const ECHO_SERVICE: ServiceDefinition = {
  echo: {
    path: '/bench.Echo/Echo',
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

if (require.main === module) {
  const server = new Server();
  server.addService(ECHO_SERVICE, {
    echo: (call: { request: Buffer }, callback: (error: null, bytes: Buffer) => void) => callback(null, call.request),
  });
  server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) => {
    if (error !== null) throw error;
    process.stdout.write(`${JSON.stringify({ msg: 'listening', port })}\n`);
  });
}
