// The shared function client over real HTTP, as the router and the gateway use it: a reply of millions of
// empty objects under the byte cap is refused before JSON.parse, a 64 MiB chunked admission reply is cut at
// the cap whatever it declares, concurrent large replies share one budget, a 429 cannot park a key for
// weeks, and no connection is opened to an address the policy refuses, whatever the name says.
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateBundle } from '../../certs/generate.ts';
import type { AdmissionRequest } from '../../lib/contract/admission-types.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { compileAddressPolicy } from '../../lib/function-client/address-policy.ts';
import { createFunctionClient } from '../../lib/function-client/function-client.ts';
import type { AddressGuard } from '../../lib/function-client/guarded-connect.ts';
import { InFlightBytes } from '../../lib/function-client/reply-limits.ts';
import { createHttpInvoker } from '../../router/reconcile/dispatch.ts';
import { FunctionCaller } from '../../webhooks/gateway/function-caller.ts';
import { eventually } from '../cluster/eventually.ts';
import { startFloodServer, type FloodServer } from './flood-server.ts';

const MiB = 1024 * 1024;
const request = { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'l', reconcileId: 'r1', trigger: { type: 'ADDED' }, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n' } }, children: {}, now: new Date().toISOString() } as ReconcileRequest;
const admission = { apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionRequest', hook: 'h', uid: 'u1', operation: 'CREATE' } as unknown as AdmissionRequest;

describe('reply and value bounds', () => {
  let flood: FloodServer;
  beforeAll(async () => void (flood = await startFloodServer()));
  afterAll(() => flood.close());

  it('refuses ~15 MiB of empty objects before parsing them, 8 at once, with the heap bounded', async () => {
    const invoker = createHttpInvoker();
    const heapBefore = process.memoryUsage().heapUsed;
    const results = await Promise.all(Array.from({ length: 8 }, () => invoker(request, { url: `${flood.base}/bomb`, timeoutMs: 60_000 })));
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
    for (const result of results) {
      expect(result.kind).toBe('failed');
      if (result.kind !== 'failed') continue;
      // Either counted out (200,000 values) or refused by the shared in-flight budget (64 MiB): never parsed.
      expect(result.message).toMatch(/holds more than 200000 JSON values; refused before parsing|budget for replies in flight/);
    }
    expect(results.some((r) => r.kind === 'failed' && r.reason === 'InvalidResponse')).toBe(true);
    // Parsed, 8 such replies would be ~8 x 40 million objects; counted, the heap holds at most the raw bytes.
    expect(heapGrowth).toBeLessThan(200 * MiB);
    await invoker.close();
  });

  it("cuts a 64 MiB chunked admission reply at the gateway caller's 8 MiB cap", async () => {
    const caller = new FunctionCaller();
    const sentReport = flood.nextFloodSent();
    const result = await caller.call(`${flood.base}/flood`, admission, { timeoutMs: 60_000 });
    expect(result).toMatchObject({ ok: false, failure: { kind: 'InvalidResponse', message: `reply is larger than ${8 * MiB} bytes; cut off at the limit` } });
    expect(await sentReport).toBeLessThan(32 * MiB);
    await caller.close();
  });
});

describe('the shared in-flight budget', () => {
  let server: Server;
  let base = '';
  const body = JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [], pad: 'x'.repeat(3 * MiB) });
  let release: () => void = () => {};
  const held = new Promise<void>((r) => (release = r));
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      // The first reply sends all but its last byte and waits: its bytes stay reserved meanwhile.
      if (req.url === '/held') return void (res.write(body.slice(0, -1)), held.then(() => res.end(body.slice(-1))));
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => void server.close());

  it('refuses a reply that would exceed the budget while another holds it, and accepts it after', async () => {
    const inFlight = new InFlightBytes(4 * MiB);
    const client = createFunctionClient({ inFlight });
    const first = client.call({ url: `${base}/held`, body: '{}', timeoutMs: 30_000 });
    await eventually('the first reply to hold its bytes', async () => inFlight.used > 2 * MiB);
    expect(await client.call({ url: `${base}/other`, body: '{}', timeoutMs: 30_000 })).toMatchObject({ kind: 'failed', reason: 'Overloaded' });
    release();
    expect(await first).toMatchObject({ kind: 'reply', status: 200 });
    expect(inFlight.used).toBe(0);
    expect(await client.call({ url: `${base}/other`, body: '{}', timeoutMs: 30_000 })).toMatchObject({ kind: 'reply' });
    await client.close();
  });
});

describe('one deadline for the whole call', () => {
  let server: Server;
  let base: string;
  const drips = new Set<NodeJS.Timeout>();
  beforeAll(async () => {
    // Headers at once, then a byte every 50 ms for ever: no idle gap reaches undici's body timeout.
    server = createServer((req, res) => {
      // An error body larger than what the log keeps, and never ended.
      if (req.url === '/error') return void (res.writeHead(500, { 'content-type': 'text/plain' }), res.write('e'.repeat(64 * 1024)));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      const drip = setInterval(() => res.write(' '), 50);
      drips.add(drip);
      res.on('close', () => {
        clearInterval(drip);
        drips.delete(drip);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    for (const drip of drips) clearInterval(drip);
    server.closeAllConnections();
    server.close();
  });

  it('ends a reply that trickles for ever at the call timeout, as a Timeout, and frees the bytes it reserved', async () => {
    const inFlight = new InFlightBytes();
    const client = createFunctionClient({ inFlight });
    expect(await client.call({ url: `${base}/`, body: '{}', timeoutMs: 600 })).toMatchObject({ kind: 'failed', reason: 'Timeout' });
    expect(inFlight.used).toBe(0);
    await client.close();
  });

  it('returns an error status with the start of its body at once, although the body never ends', async () => {
    const client = createFunctionClient({});
    const result = await client.call({ url: `${base}/error`, body: '{}', timeoutMs: 30_000 });
    expect(result).toMatchObject({ kind: 'status', status: 500 });
    expect(result.kind === 'status' && result.detail).toBe('e'.repeat(2048));
    await client.close();
  });
});

describe('addresses checked at connect time', () => {
  let server: Server;
  let port = 0;
  const connections: Socket[] = [];
  const bodies: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8').on('data', (c: string) => (text += c));
      req.on('end', () => {
        bodies.push(text);
        res.writeHead(429, { 'retry-after': String(30 * 86_400) }).end('slow down: secret-body-text');
      });
    });
    server.on('connection', (socket: Socket) => connections.push(socket));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => void server.close());

  const guard = (addresses: string[], options: { allowLoopback?: boolean; denyPort?: number } = {}): AddressGuard & { lookups: number } => {
    const policy = compileAddressPolicy({ allowLoopback: options.allowLoopback ?? true, denied: options.denyPort ? [{ network: '127.0.0.1', port: options.denyPort, what: 'the local control plane' }] : [] });
    const g = { lookups: 0, policy: () => policy, resolve: async () => (g.lookups++, addresses) };
    return g;
  };

  it.each<[string, string[], { allowLoopback?: boolean; denyPort?: number }, RegExp]>([
    ['a name resolving to the metadata address', ['169.254.169.254'], {}, /fn\.example resolves to 169\.254\.169\.254, a link-local address/],
    ['a name resolving to loopback outside dev', ['127.0.0.1'], { allowLoopback: false }, /resolves to 127\.0\.0\.1, loopback/],
    ['a name resolving to one good and one metadata address', ['127.0.0.1', '169.254.169.254'], {}, /link-local/],
    ['a name resolving to a control plane port in dev', ['127.0.0.1'], { denyPort: -1 }, /the local control plane/],
  ])('never connects for %s', async (_case, addresses, options, message) => {
    const before = connections.length;
    const g = guard(addresses, { ...options, ...(options.denyPort ? { denyPort: port } : {}) });
    const invoker = createHttpInvoker({ addressGuard: g });
    const result = await invoker(request, { url: `http://fn.example:${port}/`, timeoutMs: 5000 });
    expect(result).toMatchObject({ kind: 'failed', reason: 'AddressRefused', message: expect.stringMatching(message) });
    expect(connections.length).toBe(before);
    await invoker.close();
  });

  it('connects to the address it checked (no second lookup to rebind), and caps Retry-After; the body stays out of the message', async () => {
    const g = guard(['127.0.0.1']);
    const invoker = createHttpInvoker({ addressGuard: g, maxRetryAfterMs: 60_000 });
    // fn.rebind.invalid does not exist in DNS: only the checked address can have been connected to.
    const result = await invoker(request, { url: `http://fn.rebind.invalid:${port}/`, timeoutMs: 5000 });
    expect(result).toMatchObject({ kind: 'throttled', retryAfterMs: 60_000, detail: 'slow down: secret-body-text' });
    expect(result.kind === 'throttled' && result.message).not.toContain('secret-body-text');
    expect(g.lookups).toBe(1);
    await invoker.close();
  });

  it("holds the router's calls, single and batched, until the API server's addresses are read (the guard's first reading)", async () => {
    let addressesRead!: () => void;
    const ready = new Promise<void>((resolve) => (addressesRead = resolve));
    const held = guard(['127.0.0.1']);
    const invoker = createHttpInvoker({ addressGuard: held, ready });
    const single = invoker(request, { url: `http://fn.held.invalid:${port}/`, timeoutMs: 5000 });
    const batch = invoker.batch!([{ request: { ...request, reconcileId: 'r1' } }, { request: { ...request, reconcileId: 'r2' } }], { url: `http://fn.held.invalid:${port}/`, timeoutMs: 5000 });
    // A call without the gate, sent after the held ones, gets its whole answer meanwhile.
    const free = createHttpInvoker({ addressGuard: guard(['127.0.0.1']) });
    expect(await free(request, { url: `http://fn.free.invalid:${port}/`, timeoutMs: 5000 })).toMatchObject({ kind: 'throttled' });
    expect(held.lookups).toBe(0);
    addressesRead();
    expect(await single).toMatchObject({ kind: 'throttled' });
    expect(await batch).toHaveLength(2);
    expect(held.lookups).toBeGreaterThan(0);
    await Promise.all([invoker.close(), free.close()]);
  });

  it("the gateway's caller never connects for a hook whose name resolves to the metadata address", async () => {
    const before = connections.length;
    const caller = new FunctionCaller({ addressGuard: guard(['169.254.169.254']) });
    const result = await caller.call(`http://hook-fn.example:${port}/admit`, admission, { timeoutMs: 5000 });
    expect(result).toMatchObject({ ok: false, failure: { kind: 'Unreachable', message: expect.stringMatching(/^was not called: hook-fn\.example resolves to 169\.254\.169\.254, a link-local address/) } });
    expect(connections.length).toBe(before);
    await caller.close();
  });

  it('calls an https function at its Service name through the checked address, trusting only its caBundle', async () => {
    const bundle = await generateBundle({ now: new Date(), identity: { service: 'fn', namespace: 'n' } });
    const tls = createHttpsServer({ cert: bundle.serving.certPem, key: bundle.serving.keyPem }, (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    const url = `https://fn.n.svc:${(tls.address() as AddressInfo).port}/`;
    const client = createFunctionClient({ addressGuard: guard(['127.0.0.1']) });
    try {
      // The certificate is checked against the name, not the address connected to.
      expect(await client.call({ url, body: '{}', timeoutMs: 5000, caBundle: bundle.ca.certPem })).toMatchObject({ kind: 'reply', value: { ok: true } });
      expect(await client.call({ url, body: '{}', timeoutMs: 5000 })).toMatchObject({ kind: 'failed', reason: 'Unreachable' });
      expect(client.openPools).toBe(2);
    } finally {
      await client.close();
      tls.close();
    }
  });

  it('closes the pool of a CA bundle nothing uses any more', async () => {
    const client = createFunctionClient({ keepAliveMs: 50, addressGuard: guard(['127.0.0.1']) });
    await client.call({ url: `http://127.0.0.1:${port}/`, body: '{}', timeoutMs: 5000, caBundle: 'unused-for-http' });
    expect(client.openPools).toBe(1);
    await eventually('the idle pool to be closed', async () => client.openPools === 0, 10_000);
    await client.close();
  });
});
