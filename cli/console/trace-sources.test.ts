import { describe, expect, it } from 'vitest';
import type { TraceSpan } from './trace-model.ts';
import { admissionsOf, reconcilesOf, spansFromJaeger, storeSource } from './trace-sources.ts';
import { TraceStore } from './trace-store.ts';

describe('spansFromJaeger', () => {
  it("reads Jaeger's api/traces JSON: parents from CHILD_OF, services from processes, logs as events, error tags", () => {
    const spans = spansFromJaeger({
      traceID: 't1',
      processes: { p1: { serviceName: 'kubeloop-router' }, p2: { serviceName: 'apiserver' } },
      spans: [
        { traceID: 't1', spanID: 'a', operationName: 'reconcile podset', references: [], startTime: 1000, duration: 50, processID: 'p1', tags: [{ key: 'kubeloop.object', value: 'default/web' }], logs: [{ timestamp: 1001, fields: [{ key: 'event', value: 'watch event' }, { key: 'k8s.resource_version', value: '42' }] }] },
        { traceID: 't1', spanID: 'b', operationName: 'POST /api/v1/namespaces/default/pods', references: [{ refType: 'CHILD_OF', spanID: 'a' }], startTime: 1010, duration: 5, processID: 'p2', tags: [{ key: 'otel.status_code', value: 'ERROR' }, { key: 'otel.status_description', value: 'conflict' }] },
      ],
    });
    expect(spans[0]).toMatchObject({ spanId: 'a', service: 'kubeloop-router', startUs: 1000, durationUs: 50, events: [{ name: 'watch event', atUs: 1001, attributes: { 'k8s.resource_version': '42' } }] });
    expect(spans[0]?.parentSpanId).toBeUndefined();
    expect(spans[1]).toMatchObject({ parentSpanId: 'a', service: 'apiserver', error: { message: 'conflict' } });
  });
});

describe('storeSource', () => {
  const span = (traceId: string, name: string, extra: Partial<TraceSpan> = {}): TraceSpan => ({ traceId, spanId: `${traceId}-root`, name, service: 'kubeloop-webhook', startUs: Number(traceId.slice(1)), durationUs: 5, attributes: {}, events: [], ...extra });

  it("finds a hook's admissions, failed or not, and only a Loop's failed reconciles, newest first", async () => {
    const store = new TraceStore();
    store.add([span('t1', 'admit team-a/sidecar'), span('t2', 'admit team-a/sidecar', { error: { message: 'Timeout' } }), span('t3', 'admit other')]);
    store.add([span('t4', 'reconcile podset'), span('t5', 'reconcile podset', { error: { message: 'refused' } })]);
    const source = storeSource(store);
    expect((await source.recent(admissionsOf('team-a/sidecar'), false, 10)).map((s) => s.traceId)).toEqual(['t2', 't1']);
    expect((await source.recent(reconcilesOf('podset'), true, 10)).map((s) => s.traceId)).toEqual(['t5']);
  });
});
