import { Server, ServerCredentials, type ServiceDefinition, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import type { ProtobufExport } from './otlp-receiver';

/** The OTLP collector services' Export methods (opentelemetry-proto, collector/*\/v1). */
const EXPORT_PATHS = {
  traces: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
  metrics: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
} as const;

/** A unary method that hands its request over as bytes and answers an empty message (no field set: no bytes). */
function rawExport(path: string): ServiceDefinition {
  return {
    Export: {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (request: Buffer) => request,
      requestDeserialize: (bytes: Buffer) => bytes,
      responseSerialize: () => Buffer.alloc(0),
      responseDeserialize: () => ({}),
    },
  };
}

/**
 * An OTLP/gRPC receiver (the collector's TraceService and MetricsService) on
 * 127.0.0.1 and a free port, for exporters set to `grpc`: it keeps each
 * export request as it arrived, undecoded, with the path of the service it
 * reached (/v1/traces or /v1/metrics, as the HTTP receiver names them).
 */
export class OtlpGrpcReceiver {
  private constructor(
    private readonly server: Server,
    private readonly port: number,
    /** Every export request, in the order they arrived. */
    readonly protobufExports: readonly ProtobufExport[],
  ) {}

  static async start(): Promise<OtlpGrpcReceiver> {
    const server = new Server();
    const exports: ProtobufExport[] = [];
    for (const [signal, path] of Object.entries(EXPORT_PATHS))
      server.addService(rawExport(path), {
        Export: (call: ServerUnaryCall<Buffer, object>, callback: sendUnaryData<object>) => {
          exports.push({ path: `/v1/${signal}`, body: call.request });
          callback(null, {});
        },
      });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    return new OtlpGrpcReceiver(server, port, exports);
  }

  /** What OTEL_EXPORTER_OTLP_ENDPOINT should say. */
  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.tryShutdown(() => resolve()));
  }
}
