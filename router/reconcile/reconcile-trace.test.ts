import { describe, expect, it } from 'vitest';
import { useInMemoryTracing } from '../../test/support/in-memory-tracing.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { watchEvent } from '../base/watch-events.ts';
import { FlightRecorder } from './flight-recorder.ts';
import { ReconcileTrace, requestDigest } from './reconcile-trace.ts';

const exporter = useInMemoryTracing();
const podSet = { apiVersion: 'example.com/v1', kind: 'PodSet', metadata: { namespace: 'default', name: 'web', uid: 'u1', resourceVersion: '42' } };
const request: ReconcileRequest = { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'podsets', reconcileId: 'r-1', trigger: { type: 'MODIFIED' }, object: podSet, children: {}, now: '2026-01-01T00:00:00Z' };


function oneReconcile(recorder?: FlightRecorder) {
  const t0 = performance.now();
  const traced = new ReconcileTrace('podsets', 'default/web', [watchEvent('primary', 'MODIFIED', podSet, Date.now() - 5)], t0 - 3, recorder);
  const call = traced.startCall(request, 'http://fn/');
  traced.endCall(call.span, { kind: 'ok', status: 200, response: { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [{ op: 'create', object: { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', name: 'web-1' } } }] } }, 2);
  const write = traced.begin({ op: 'create', object: { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', name: 'web-1' } } });
  write.end({ result: 'applied' });
  traced.begin({ op: 'patch', target: { apiVersion: 'example.com/v1', kind: 'PodSet', namespace: 'default', name: 'web' }, patch: [] }).end({ result: 'conflict', status: 409, message: 'changed' });
  traced.finish('conflict', 'backoff');
  return { traced, call, write };
}

describe('ReconcileTrace', () => {
  it('builds one trace: reconcile (with its watch events) over queue, call, writes and decide', () => {
    const { traced, call, write } = oneReconcile();
    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name === 'reconcile podsets')!;
    expect(root.attributes['kubeloop.trigger']).toBe('primary MODIFIED example.com/v1/PodSet default/web rv=42');
    expect(root.events.map((e) => e.name)).toEqual(['watch event']);
    const children = spans.filter((s) => s.parentSpanContext?.spanId === root.spanContext().spanId).map((s) => s.name);
    expect(children).toEqual(['queue', 'call podsets', 'create v1/Pod default/web-1', 'patch example.com/v1/PodSet default/web', 'decide']);
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([traced.traceId]));
    const conflict = spans.find((s) => s.name.startsWith('patch'))!;
    expect(conflict.attributes['http.response.status_code']).toBe(409);
    expect(conflict.attributes['kubeloop.write.result']).toBe('conflict');
    // The function continues the call span: traceparent, and the same as the CloudEvents extension.
    const callSpan = spans.find((s) => s.name === 'call podsets')!;
    expect(call.headers.traceparent).toBe(`00-${traced.traceId}-${callSpan.spanContext().spanId}-01`);
    expect(call.headers['ce-traceparent']).toBe(call.headers.traceparent);
    // A write's API requests carry its span, so the API server's own spans nest under it.
    const create = spans.find((s) => s.name === 'create v1/Pod default/web-1')!;
    expect(write.headers.traceparent).toBe(`00-${traced.traceId}-${create.spanContext().spanId}-01`);
  });

  it('leaves a flight-recorder entry with triggers, actions, write results and the trace id', () => {
    const recorder = new FlightRecorder({ perObject: 5, objects: 5 });
    const { traced } = oneReconcile(recorder);
    const [entry] = recorder.history('podsets', 'default/web');
    expect(entry).toMatchObject({
      reconcileId: 'r-1',
      traceId: traced.traceId,
      outcome: 'conflict',
      actions: ['create v1/Pod default/web-1'],
      writes: [
        { action: 'create v1/Pod default/web-1', result: 'applied' },
        { action: 'patch example.com/v1/PodSet default/web', result: 'conflict', status: 409, message: 'changed' },
      ],
    });
    expect(entry!.triggers[0]).toMatchObject({ source: 'primary', type: 'MODIFIED', resourceVersion: '42' });
    expect(entry!.requestDigest).toMatch(/^[0-9a-f]{16}$/);
  });

  it('keeps at most 20 action lines of a large answer and counts the rest', () => {
    const recorder = new FlightRecorder({ perObject: 5, objects: 5 });
    const traced = new ReconcileTrace('podsets', 'default/big', [], performance.now(), recorder);
    const call = traced.startCall(request, 'http://fn/');
    const actions = Array.from({ length: 25 }, (_, i) => ({ op: 'create' as const, object: { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', name: `p-${i}` } } }));
    traced.endCall(call.span, { kind: 'ok', status: 200, response: { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions } }, 1);
    traced.finish('ok', 'forget');
    const [entry] = recorder.history('podsets', 'default/big');
    expect(entry?.actions).toHaveLength(20);
    expect(entry?.omitted).toEqual({ actions: 5, writes: 0 });
    expect(entry?.triggers).toEqual([]);
  });
});

describe('requestDigest', () => {
  it('stays the digest earlier histories hold: sha256 of the primary, trigger and children, first 16 hex digits', () => {
    const withChildren: ReconcileRequest = { ...request, children: { 'v1/Pod': [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', resourceVersion: '7' } }] } };
    // The value the Hash-per-call version gave for this request (uid u1, resourceVersion 42, MODIFIED, one child).
    expect(requestDigest(withChildren)).toBe('071e9bd2e10ac7be');
    expect(requestDigest(request)).not.toBe(requestDigest(withChildren));
  });
});
