// The console's server on a real socket, without a cluster (nothing here reaches the API server): where it
// listens by default, who it answers, and its OTLP receiver feeding the trace view.
import { request } from 'node:http';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { startConsole, type RunningConsole } from './console-server.ts';
import { storeSource } from './trace-sources.ts';
import { TraceStore } from './trace-store.ts';
import type { ConsoleAssets } from './ui-assets.ts';

let running: RunningConsole;
let client: KubeClient;
let port: number;
const assets: ConsoleAssets = new Map([['/', { contentType: 'text/html; charset=utf-8', body: Buffer.from('<!doctype html><title>console</title>') }]]);

/** A raw request, so Host and Origin are exactly what a browser on another site (or a rebinding attack) would send. */
function get(path: string, headers: Record<string, string>, method = 'GET', body?: Uint8Array): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  // Nothing listens there: these tests never reach the API server.
  client = await KubeClient.fromKubeConfig({ getCurrentCluster: () => ({ server: 'https://127.0.0.1:9' }), applyToHTTPSOptions: async () => {} });
  const store = new TraceStore();
  running = await startConsole({ client, logger: pino({ level: 'silent' }), assets, traceStore: store, traces: storeSource(store) });
  port = Number(new URL(running.url).port);
});

afterAll(async () => {
  await running?.close();
  await client?.close();
});

describe('the console server', () => {
  it('listens on loopback only by default', () => {
    expect(new URL(running.url).hostname).toBe('127.0.0.1');
  });

  it('serves its page to a browser on its own origin, with a strict content security policy', async () => {
    const page = await get('/', { host: `127.0.0.1:${port}`, 'sec-fetch-site': 'none' });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect((await get('/', { host: `localhost:${port}` })).status).toBe(200);
  });

  it("refuses another site's page reading the cluster through it (Origin)", async () => {
    const refused = await get('/api/overview', { host: `127.0.0.1:${port}`, origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).message).toContain('cross-site');
  });

  it('refuses a request under a name that is not its own (DNS rebinding)', async () => {
    const refused = await get('/api/overview', { host: `evil.example:${port}` });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).message).toContain('DNS rebinding');
  });

  it('says which server did not answer when the API server is unreachable, instead of an opaque internal error', async () => {
    const failed = await get('/api/overview', { host: `127.0.0.1:${port}` });
    expect(failed.status).toBe(502);
    expect(JSON.parse(failed.body).message).toContain('https://127.0.0.1:9');
  });

  it('keeps the spans exported to /v1/traces (OTLP/HTTP protobuf) and serves them as a trace', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const span = provider.getTracer('t').startSpan('reconcile podset');
    span.end();
    const traceId = span.spanContext().traceId;
    const body = ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())!;
    const posted = await get('/v1/traces', { host: `127.0.0.1:${port}`, 'content-type': 'application/x-protobuf', 'content-length': String(body.length) }, 'POST', body);
    expect(posted.status).toBe(200);
    const trace = await get(`/api/traces/${traceId}`, { host: `127.0.0.1:${port}` });
    expect(JSON.parse(trace.body)).toMatchObject({ traceId, spans: [{ name: 'reconcile podset' }] });
  });

  it('answers 400 with a reason to a body that is not an OTLP export, and to a trace id that is not one', async () => {
    const junk = new Uint8Array([0x0a, 0xff]);
    const posted = await get('/v1/traces', { host: `127.0.0.1:${port}`, 'content-type': 'application/x-protobuf', 'content-length': '2' }, 'POST', junk);
    expect(posted.status).toBe(400);
    expect(JSON.parse(posted.body).message).toContain('not an OTLP trace export');
    expect((await get('/api/traces/nope', { host: `127.0.0.1:${port}` })).status).toBe(400);
  });
});
