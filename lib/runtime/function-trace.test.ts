import { propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { contextFromHeaders } from '../observability/trace-context.ts';
import { useInMemoryTracing } from '../../test/support/in-memory-tracing.ts';
import { CLOUDEVENT_TYPE } from '../contract/types.ts';
import { defineFunction, traceAttributes, traceEvent } from '../sdk/index.ts';
import { createFunctionCore } from './function-core.ts';

const exporter = useInMemoryTracing();
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

const fn = defineFunction({
  name: 'traced',
  reconcile: (request) => {
    traceEvent('decided', { replicas: 3 });
    traceAttributes({ 'podset.name': request.object.metadata?.name ?? '' });
    return { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] };
  },
});
const logger = { error() {}, warn() {}, debug() {}, isLevelEnabled: () => false };
const body = JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'l', trigger: { type: 'MODIFIED' }, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'default' } }, children: {}, now: '2026-01-01T00:00:00Z' });


describe('the function span', () => {
  it.each([
    ['traceparent', 'application/json', { traceparent: `00-${TRACE_ID}-${PARENT}-01` }],
    ['the CloudEvents extension', 'application/json', { 'ce-specversion': '1.0', 'ce-id': '1', 'ce-source': '/x', 'ce-type': CLOUDEVENT_TYPE, 'ce-traceparent': `00-${TRACE_ID}-${PARENT}-01` }],
  ])('continues the caller trace from %s and carries what the function added', (_name, type, headers) => {
    const core = createFunctionCore(fn, { logger });
    const reply = core.handle({ headers: { 'content-type': type, ...headers }, body });
    expect(reply.status).toBe(200);
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('function traced');
    expect(span?.spanContext().traceId).toBe(TRACE_ID);
    expect(span?.parentSpanContext?.spanId).toBe(PARENT);
    expect(span?.events.map((e) => [e.name, e.attributes])).toEqual([['decided', { replicas: 3 }]]);
    expect(span?.attributes['podset.name']).toBe('web');
  });

  it('records nothing for an unsampled caller, and the SDK calls stay harmless', () => {
    const core = createFunctionCore(fn, { logger });
    const reply = core.handle({ headers: { 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-${PARENT}-00` }, body });
    expect(reply.status).toBe(200);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('reads an unsampled caller\'s traceparent as the propagator does: the same remote, unsampled span context', () => {
    const header = `00-${TRACE_ID}-${PARENT}-00`;
    const fast = trace.getSpanContext(contextFromHeaders({ traceparent: header }, ROOT_CONTEXT));
    const viaPropagator = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent: header }));
    expect(fast).toEqual(viaPropagator);
    expect(fast).toMatchObject({ traceId: TRACE_ID, spanId: PARENT, traceFlags: 0, isRemote: true });
  });

  it.each([
    ['upper-case hex', `00-${TRACE_ID.toUpperCase()}-${PARENT}-00`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT}-00`],
    ['an all-zero parent id', `00-${TRACE_ID}-${'0'.repeat(16)}-00`],
    ['version ff', `ff-${TRACE_ID}-${PARENT}-00`],
    ['version 00 with more fields', `00-${TRACE_ID}-${PARENT}-00-extra`],
    ['a short id', `00-${TRACE_ID.slice(1)}-${PARENT}-00`],
  ])('takes a traceparent with %s for no caller at all, as the propagator does: the function samples a trace of its own', (_what, traceparent) => {
    expect(trace.getSpanContext(contextFromHeaders({ traceparent }, ROOT_CONTEXT))).toEqual(trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent })));
    const core = createFunctionCore(fn, { logger });
    expect(core.handle({ headers: { 'content-type': 'application/json', traceparent }, body }).status).toBe(200);
    // The test provider samples every new trace: a root span, not a child of the malformed header's ids.
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('function traced');
    expect(span?.parentSpanContext).toBeUndefined();
  });

  it('records nothing for the items of a JSON batch whose caller did not sample', () => {
    const core = createFunctionCore(fn, { logger });
    const items = ['a', 'b'].map((id) => ({ ...JSON.parse(body), reconcileId: id }));
    const reply = core.handle({ headers: { 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-${PARENT}-00` }, body: JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileBatchRequest', items }) });
    expect(reply.status).toBe(200);
    expect((JSON.parse(reply.body) as { items: unknown[] }).items).toHaveLength(2);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('gives each item of a CloudEvents batch its own span, a child of its own event\'s traceparent', () => {
    const core = createFunctionCore(fn, { logger });
    const other = 'a3ce929d0e0e47364bf92f3577b34da6';
    const events = [TRACE_ID, other].map((traceId, i) => ({ specversion: '1.0', id: `e${i}`, source: '/x', type: CLOUDEVENT_TYPE, traceparent: `00-${traceId}-${PARENT}-01`, data: { ...JSON.parse(body), reconcileId: `e${i}` } }));
    const reply = core.handle({ headers: { 'content-type': 'application/cloudevents-batch+json' }, body: JSON.stringify(events) });
    expect(reply.status).toBe(200);
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => [s.name, s.spanContext().traceId, s.parentSpanContext?.spanId])).toEqual([
      ['function traced', TRACE_ID, PARENT],
      ['function traced', other, PARENT],
    ]);
    expect(spans.map((s) => s.events.map((e) => e.name))).toEqual([['decided'], ['decided']]);
  });
});
