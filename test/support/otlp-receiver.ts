import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/JSON export carries it (ids in hex), with its attributes as a plain object. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty or absent for a root span. */
  parentSpanId?: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
}

/** One data point of a received metric: a sum's or gauge's value, or a histogram's buckets. */
export interface ReceivedPoint {
  metric: string;
  attributes: Record<string, unknown>;
  value?: number;
  explicitBounds?: number[];
  bucketCounts?: number[];
}

/** The subset of the OTLP/JSON encoding (opentelemetry-proto, JSON mapping) this receiver reads. */
interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}
interface ExportedSpan extends Omit<ReceivedSpan, 'attributes'> {
  attributes?: KeyValue[];
}
interface ExportedPoint {
  attributes?: KeyValue[];
  asInt?: number | string;
  asDouble?: number;
  explicitBounds?: number[];
  bucketCounts?: (number | string)[];
}
interface ExportedMetric {
  name: string;
  sum?: { dataPoints: ExportedPoint[] };
  gauge?: { dataPoints: ExportedPoint[] };
  histogram?: { dataPoints: ExportedPoint[] };
}
interface ExportedResource {
  attributes?: KeyValue[];
}
interface TraceExport {
  resourceSpans?: { resource?: ExportedResource; scopeSpans?: { spans?: ExportedSpan[] }[] }[];
}
interface MetricExport {
  resourceMetrics?: { resource?: ExportedResource; scopeMetrics?: { metrics?: ExportedMetric[] }[] }[];
}

/** An export request in the OTLP protobuf encoding (`http/protobuf`), kept as it arrived. */
export interface ProtobufExport {
  /** /v1/traces or /v1/metrics. */
  path: string;
  body: Buffer;
}

/**
 * An OTLP/HTTP receiver on 127.0.0.1 and a free port: it decodes what
 * exporters set to `http/json` send to /v1/traces and /v1/metrics, keeps
 * what `http/protobuf` exporters send undecoded (no decoder of the OTLP
 * protobuf messages is at hand), and lets a test wait (with a deadline)
 * until what it expects has arrived.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly points: ReceivedPoint[] = [];
  /** Every export request's body as it arrived, for checks on everything that was sent. */
  readonly bodies: string[] = [];
  /** Every export request in the protobuf encoding (content type application/x-protobuf). */
  readonly protobufExports: ProtobufExport[] = [];
  /** The attributes of every resource an export named. */
  readonly resources: Record<string, unknown>[] = [];
  private readonly listeners = new Set<() => void>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        if (request.headers['content-type'] === 'application/x-protobuf') {
          receiver.protobufExports.push({ path: request.url ?? '', body });
          // An empty Export*ServiceResponse: a message with no field set encodes as no bytes.
          response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
          receiver.notify();
          return;
        }
        receiver.receive(request.url ?? '', body.toString('utf8'));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** What OTEL_EXPORTER_OTLP_ENDPOINT should say. */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves once `isComplete` holds for what has arrived; rejects after `timeoutMs` naming `what`. */
  waitFor(what: string, isComplete: () => boolean, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (isComplete()) finish(resolve);
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`the OTLP receiver did not get ${what} within ${timeoutMs} ms`))),
        timeoutMs,
      );
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
        settle();
      };
      this.listeners.add(check);
      check();
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private receive(path: string, body: string): void {
    // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- the exporter's OTLP/JSON, read as the shape the spec gives it
    const decoded = JSON.parse(body) as TraceExport & MetricExport;
    this.bodies.push(body);
    for (const { resource } of [...(decoded.resourceSpans ?? []), ...(decoded.resourceMetrics ?? [])])
      if (resource !== undefined) this.resources.push(attributesOf(resource.attributes));
    if (path === '/v1/traces') {
      for (const resource of decoded.resourceSpans ?? [])
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? []) this.spans.push({ ...span, attributes: attributesOf(span.attributes) });
    } else if (path === '/v1/metrics') {
      for (const resource of decoded.resourceMetrics ?? [])
        for (const scope of resource.scopeMetrics ?? []) for (const metric of scope.metrics ?? []) this.points.push(...pointsOf(metric));
    }
    this.notify();
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }
}

function pointsOf(metric: ExportedMetric): ReceivedPoint[] {
  const points = (metric.sum ?? metric.gauge ?? metric.histogram)?.dataPoints ?? [];
  return points.map((point) => ({
    metric: metric.name,
    attributes: attributesOf(point.attributes),
    ...(point.asInt !== undefined || point.asDouble !== undefined ? { value: Number(point.asInt ?? point.asDouble) } : {}),
    ...(point.explicitBounds === undefined ? {} : { explicitBounds: point.explicitBounds }),
    ...(point.bucketCounts === undefined ? {} : { bucketCounts: point.bucketCounts.map(Number) }),
  }));
}

/** OTLP attributes ([{ key, value: { stringValue } }, ...]) as { key: value }. */
function attributesOf(attributes: KeyValue[] | undefined): Record<string, unknown> {
  const plain: Record<string, unknown> = {};
  for (const { key, value } of attributes ?? []) {
    const scalar = value['stringValue'] ?? value['boolValue'] ?? value['doubleValue'] ?? value['intValue'];
    plain[key] = value['intValue'] === undefined ? scalar : Number(value['intValue']);
  }
  return plain;
}
