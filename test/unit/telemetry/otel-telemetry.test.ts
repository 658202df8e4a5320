import { createNoopMeter, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { JobTransition } from '../../../src/domain/transition';
import { OtelTelemetry } from '../../../src/telemetry/otel-telemetry';
import { startTelemetry } from '../../../src/telemetry/start-telemetry';
import { SPAN } from '../../../src/telemetry/telemetry-names';
import { COMPLETION } from '../../support/job-transitions';

/** A completion whose fields count how often they are read, as a store's transition built when first read would. */
function countedCompletion(): { transition: JobTransition; reads: () => number } {
  let reads = 0;
  const transition = { ...COMPLETION };
  for (const key of Object.keys(COMPLETION) as (keyof JobTransition)[]) {
    Object.defineProperty(transition, key, {
      enumerable: true,
      get: () => {
        reads += 1;
        return COMPLETION[key];
      },
    });
  }
  return { transition, reads: () => reads };
}

/** A tracer whose finished spans are kept. */
function recordingTracer(): { tracer: Tracer; spans: InMemorySpanExporter } {
  const spans = new InMemorySpanExporter();
  return { tracer: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }).getTracer('test'), spans };
}

describe('job transitions in telemetry', () => {
  it('go to no exporter when the environment names none', async () => {
    const telemetry = startTelemetry({});
    expect(telemetry.isExporting).toBe(false);
    await telemetry.shutdown();
  });

  it('are not read when neither traces nor metrics are exported', () => {
    const { tracer, spans } = recordingTracer();
    const { transition, reads } = countedCompletion();
    new OtelTelemetry(tracer, createNoopMeter(), false).jobTransitions([transition]);
    expect(reads()).toBe(0);
    expect(spans.getFinishedSpans()).toEqual([]);
  });

  it('each make a span when they are', () => {
    const { tracer, spans } = recordingTracer();
    const { transition, reads } = countedCompletion();
    new OtelTelemetry(tracer, createNoopMeter(), true).jobTransitions([transition]);
    expect(reads()).toBeGreaterThan(0);
    expect(spans.getFinishedSpans().map((span) => [span.name, span.attributes['ojs.job.state.to']])).toEqual([
      [SPAN.jobTransition, 'completed'],
    ]);
  });
});
