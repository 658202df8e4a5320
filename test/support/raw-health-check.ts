import type { ClientHttp2Session, IncomingHttpHeaders } from 'node:http2';

/**
 * A unary health check over a raw HTTP/2 stream (for tests below gRPC: ping
 * floods, proxies): resolves once the answer ends with grpc-status 0.
 */
export function rawHealthCheck(session: ClientHttp2Session): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ':method': 'POST',
      ':path': '/grpc.health.v1.Health/Check',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    stream.on('error', reject);
    stream.on('trailers', (trailers: IncomingHttpHeaders) => {
      if (trailers['grpc-status'] !== '0') reject(new Error(`health check answered grpc-status ${String(trailers['grpc-status'])}`));
    });
    stream.resume();
    stream.on('end', () => resolve());
    // An empty HealthCheckRequest: uncompressed, length 0.
    stream.end(Buffer.from([0, 0, 0, 0, 0]));
  });
}
