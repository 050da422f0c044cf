import { SpanStatusCode, trace, context } from '@opentelemetry/api';
import { ProtobufTraceSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { describe, expect, it } from 'vitest';
import { decodeOtlpJson, decodeOtlpProtobuf, OtlpDecodeError } from './otlp-decode.ts';

/** Spans made by the real SDK, as kubeloop's exporters send them: a root, a child with an event, an error. */
function recordedSpans() {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ resource: resourceFromAttributes({ 'service.name': 'kubeloop-router' }), spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const tracer = provider.getTracer('test');
  const root = tracer.startSpan('reconcile podset', { startTime: 1_700_000_000_000, attributes: { 'kubeloop.object': 'default/web', 'kubeloop.trigger.coalesced': 2, sampled: true, ratio: 0.5 } });
  const ctx = trace.setSpan(context.active(), root);
  const call = tracer.startSpan('call podset', { startTime: 1_700_000_000_010 }, ctx);
  call.addEvent('retry', { attempt: 1 }, 1_700_000_000_012);
  call.setStatus({ code: SpanStatusCode.ERROR, message: 'Timeout' });
  call.end(1_700_000_000_030);
  root.end(1_700_000_000_050);
  return exporter.getFinishedSpans();
}

describe('decodeOtlpProtobuf', () => {
  it('reads the spans the OpenTelemetry SDK exports, with parents, times, attributes, events and error status', () => {
    const spans = decodeOtlpProtobuf(ProtobufTraceSerializer.serializeRequest(recordedSpans())!);
    const root = spans.find((s) => s.name === 'reconcile podset')!;
    const call = spans.find((s) => s.name === 'call podset')!;
    expect(root).toMatchObject({ service: 'kubeloop-router', startUs: 1_700_000_000_000_000, durationUs: 50_000, attributes: { 'kubeloop.object': 'default/web', 'kubeloop.trigger.coalesced': 2, sampled: true, ratio: 0.5 } });
    expect(root.parentSpanId).toBeUndefined();
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(call).toMatchObject({ traceId: root.traceId, parentSpanId: root.spanId, durationUs: 20_000, error: { message: 'Timeout' } });
    expect(call.events).toEqual([{ name: 'retry', atUs: 1_700_000_000_012_000, attributes: { attempt: 1 } }]);
  });

  it('refuses a body cut short', () => {
    const bytes = ProtobufTraceSerializer.serializeRequest(recordedSpans())!;
    expect(() => decodeOtlpProtobuf(bytes.subarray(0, bytes.length - 3))).toThrow(OtlpDecodeError);
  });
});

describe('decodeOtlpJson', () => {
  it('reads the same spans from OTLP/JSON', () => {
    const body = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(recordedSpans())!)) as unknown;
    const spans = decodeOtlpJson(body);
    expect(spans.map((s) => s.name).sort()).toEqual(['call podset', 'reconcile podset']);
    const root = spans.find((s) => s.name === 'reconcile podset')!;
    expect(spans.find((s) => s.name === 'call podset')).toMatchObject({ parentSpanId: root.spanId, error: { message: 'Timeout' }, durationUs: 20_000 });
  });

  it('refuses a document without resourceSpans', () => {
    expect(() => decodeOtlpJson({ spans: [] })).toThrow('resourceSpans');
  });
});
