import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';

/**
 * An OpenTelemetry SDK registered in-process, as an application would
 * register one: a global tracer provider whose spans are kept in memory
 * (BasicTracerProvider, InMemorySpanExporter), and the AsyncLocalStorage
 * context manager that keeps a span active across awaits. No propagator is
 * registered: the SDK must not need one. (Everything comes from the copy of
 * sdk-trace-base that sdk-trace-node re-exports, so the types agree.)
 */
export class RecordedSpans {
  private constructor(
    private readonly provider: NodeTracerProvider,
    private readonly exporter: InMemorySpanExporter,
  ) {}

  static register(): RecordedSpans {
    const exporter = new InMemorySpanExporter();
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register({ propagator: null });
    return new RecordedSpans(provider, exporter);
  }

  /** Every span ended so far. */
  get ended(): ReadableSpan[] {
    return this.exporter.getFinishedSpans();
  }

  /** The one ended span named `name`; fails naming what there is when there is none or more than one. */
  named(name: string): ReadableSpan {
    const found = this.ended.filter((span) => span.name === name);
    if (found.length !== 1)
      throw new Error(`expected one span named "${name}", found ${found.length} among: ${this.ended.map((span) => span.name).join(', ')}`);
    return found[0]!;
  }

  reset(): void {
    this.exporter.reset();
  }

  /** Unregisters the provider and the context manager, leaving the global API as it was. */
  async unregister(): Promise<void> {
    await this.provider.shutdown();
    trace.disable();
    context.disable();
  }
}
