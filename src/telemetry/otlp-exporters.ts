import { OTLPMetricExporter as GrpcMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtobufMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { OtlpProtocol } from './telemetry-settings';

/*
 * Each exporter reads the rest of its configuration from the environment
 * itself: OTEL_EXPORTER_OTLP_[<SIGNAL>_]ENDPOINT, _HEADERS, _TIMEOUT,
 * _COMPRESSION, the certificates of grpc, and (metrics) the temporality
 * preference.
 */

/** The OTLP span exporter speaking `protocol`. */
export function otlpSpanExporter(protocol: OtlpProtocol): SpanExporter {
  switch (protocol) {
    case 'http/protobuf':
      return new ProtobufTraceExporter();
    case 'http/json':
      return new JsonTraceExporter();
    case 'grpc':
      return new GrpcTraceExporter();
  }
}

/** The OTLP metric exporter speaking `protocol`. */
export function otlpMetricExporter(protocol: OtlpProtocol): PushMetricExporter {
  switch (protocol) {
    case 'http/protobuf':
      return new ProtobufMetricExporter();
    case 'http/json':
      return new JsonMetricExporter();
    case 'grpc':
      return new GrpcMetricExporter();
  }
}
