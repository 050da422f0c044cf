import { describe, expect, it } from 'vitest';
import type { TraceSpan } from './trace-model.ts';
import { TraceStore } from './trace-store.ts';

const span = (traceId: string, spanId: string, startUs: number, extra: Partial<TraceSpan> = {}): TraceSpan => ({ traceId, spanId, name: `reconcile ${traceId}`, service: 'kubeloop-router', startUs, durationUs: 10, attributes: {}, events: [], ...extra });

describe('TraceStore', () => {
  it('keeps at most its number of traces, dropping the least recently touched', () => {
    const store = new TraceStore({ traces: 2, spansPerTrace: 10 });
    store.add([span('a', '1', 1), span('b', '1', 2)]);
    store.add([span('a', '2', 3)]);
    store.add([span('c', '1', 4)]);
    expect(store.get('b')).toBeUndefined();
    expect(store.get('a')).toHaveLength(2);
    expect(store.get('c')).toHaveLength(1);
  });

  it('caps the spans of one trace and counts what it dropped', () => {
    const store = new TraceStore({ traces: 5, spansPerTrace: 2 });
    store.add([span('a', '1', 1), span('a', '2', 2), span('a', '3', 3)]);
    expect(store.get('a')).toHaveLength(2);
    expect(store.dropped).toBe(1);
  });

  it('finds failed reconciles newest first: an error span or an outcome other than ok', () => {
    const store = new TraceStore();
    store.add([span('ok', '1', 1), span('ok', '2', 2, { parentSpanId: '1', name: 'decide', attributes: { 'kubeloop.outcome': 'ok' } })]);
    store.add([span('bad', '1', 3), span('bad', '2', 4, { parentSpanId: '1', name: 'call', error: { message: 'Timeout' } })]);
    store.add([span('conflict', '1', 5), span('conflict', '2', 6, { parentSpanId: '1', name: 'decide', attributes: { 'kubeloop.outcome': 'conflict' } })]);
    expect(store.find((s) => s.failed, 10).map((s) => s.traceId)).toEqual(['conflict', 'bad']);
  });
});
