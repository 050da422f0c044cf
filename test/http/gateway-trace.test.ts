// The admission trace over real HTTPS and HTTP: the API server's traceparent (as kube-apiserver sends it with
// tracing on) is the parent of the gateway's span, which holds the context lookup and the call, and the
// function's own span continues the call.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useInMemoryTracing } from '../support/in-memory-tracing.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { startWatcherSidecarGateway, type WatcherSidecarGateway } from './watcher-sidecar-gateway.ts';

const exporter = useInMemoryTracing();
const API_SERVER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const API_SERVER_SPAN = 'b7ad6b7169203331';
let gateway: WatcherSidecarGateway;
let agent: Agent;

beforeAll(async () => {
  gateway = await startWatcherSidecarGateway(createLogger({ name: 'test', level: 'silent' }));
  agent = new Agent({ connect: { ca: gateway.bundle.ca.certPem } });
});
afterAll(async () => {
  await agent.close();
  await gateway.close();
});

describe('the admission trace', () => {
  it('continues the API server span: gateway, context lookup, call, function', async () => {
    const review = readFileSync(new URL('../fixtures/admission/pod-create-annotated.json', import.meta.url), 'utf8');
    const reply = await request(gateway.url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', traceparent: `00-${API_SERVER_TRACE}-${API_SERVER_SPAN}-01` },
      body: review,
    });
    expect(reply.statusCode).toBe(200);
    await reply.body.json();
    const spans = exporter.getFinishedSpans();
    const byName = (name: string) => spans.find((s) => s.name === name);
    const gatewaySpan = spans.find((s) => s.name === 'admit watcher-sidecar' && s.parentSpanContext?.spanId === API_SERVER_SPAN);
    expect(gatewaySpan?.spanContext().traceId).toBe(API_SERVER_TRACE);
    expect(gatewaySpan?.attributes['kubeloop.admission.outcome']).toBe('patched');
    expect(byName('context lookup')?.parentSpanContext?.spanId).toBe(gatewaySpan?.spanContext().spanId);
    const call = byName('call watcher-sidecar');
    expect(call?.parentSpanContext?.spanId).toBe(gatewaySpan?.spanContext().spanId);
    const fn = spans.find((s) => s.name === 'function watcher-sidecar' && s.parentSpanContext?.spanId === call?.spanContext().spanId);
    expect(fn?.spanContext().traceId).toBe(API_SERVER_TRACE);
  });
});
