// A function's connection opened ahead of its first call, over real sockets (lib/function-client/preconnector.ts):
// the first call goes over it (the server sees one connection), joins it while it is still opening, an unused one
// is closed, close() closes it, an address the policy refuses is never connected, and TLS trusts only the caBundle.
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateBundle } from '../../certs/generate.ts';
import { compileAddressPolicy } from '../../lib/function-client/address-policy.ts';
import { createFunctionClient } from '../../lib/function-client/function-client.ts';
import { guardedConnector, type AddressGuard } from '../../lib/function-client/guarded-connect.ts';
import { Preconnector } from '../../lib/function-client/preconnector.ts';
import { createHttpInvoker } from '../../router/reconcile/dispatch.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { eventually } from '../cluster/eventually.ts';

const request = { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'l', reconcileId: 'r1', trigger: { type: 'ADDED' }, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n' } }, children: {}, now: new Date().toISOString() } as ReconcileRequest;
const reply = JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] });

/** A guard that resolves every name to `addresses` and counts its lookups. */
function guard(addresses: string[], allowLoopback = true): AddressGuard & { lookups: number } {
  const policy = compileAddressPolicy({ allowLoopback, denied: [] });
  const g = { lookups: 0, policy: () => policy, resolve: async () => (g.lookups++, addresses) };
  return g;
}

/** Lets pending promise callbacks run; no timing involved. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Sockets the server accepted (for https, once their handshake is done); `closed` holds those closed since. */
function counted(server: Server, event: 'connection' | 'secureConnection'): { accepted: Socket[]; closed: Set<Socket> } {
  const accepted: Socket[] = [];
  const closed = new Set<Socket>();
  server.on(event, (socket: Socket) => {
    accepted.push(socket);
    socket.on('close', () => closed.add(socket));
  });
  return { accepted, closed };
}

describe('a function connection opened ahead (http)', () => {
  let server: Server;
  let url = '';
  let sockets: ReturnType<typeof counted>;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(reply));
    });
    sockets = counted(server, 'connection');
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://fn.example.invalid:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('opens one connection before any call, the first call goes over it, and none opens while it is open', async () => {
    const before = sockets.accepted.length;
    const g = guard(['127.0.0.1']);
    const invoker = createHttpInvoker({ addressGuard: g });
    invoker.preconnect!({ url });
    invoker.preconnect!({ url });
    await eventually('the connection opened ahead', async () => sockets.accepted.length === before + 1);
    expect(await invoker(request, { url, timeoutMs: 5000 })).toMatchObject({ kind: 'ok' });
    expect(sockets.accepted.length).toBe(before + 1);
    // None while the pool has a connection there (it would go unused): not even the guard is asked.
    const lookups = g.lookups;
    invoker.preconnect!({ url });
    await settle();
    expect([g.lookups, sockets.accepted.length]).toEqual([lookups, before + 1]);
    await invoker.close();
  });

  it('has a call made while that connection is still opening wait for it, not open a second', async () => {
    const before = sockets.accepted.length;
    let checked!: () => void;
    const gate = new Promise<void>((resolve) => (checked = resolve));
    // The first connect's address check is held: the connection opened ahead is still opening when the call is made.
    const g = {
      lookups: 0,
      policy: guard([]).policy,
      resolve: async () => {
        if (++g.lookups === 1) await gate;
        return ['127.0.0.1'];
      },
    };
    const client = createFunctionClient({ addressGuard: g });
    client.preconnect({ url });
    await settle();
    expect(g.lookups).toBe(1);
    const call = client.call({ url, body: '{}', timeoutMs: 5000 });
    await settle();
    // The call's connect waits for the one opening: no address check, no connection of its own.
    expect(g.lookups).toBe(1);
    checked();
    expect(await call).toMatchObject({ kind: 'reply' });
    expect([g.lookups, sockets.accepted.length]).toEqual([1, before + 1]);
    await client.close();
  });

  it('closes a connection no call took within its idle time', async () => {
    const before = sockets.accepted.length;
    const ahead = new Preconnector(guardedConnector(guard(['127.0.0.1'])), 100);
    ahead.open(new URL(url));
    const opened = await eventually('the connection opened ahead', async () => sockets.accepted[before]);
    await eventually('the unused connection closed', async () => sockets.closed.has(opened) && ahead.kept === 0);
    ahead.close();
  });

  it('closes the kept connection on close(), and opens none after', async () => {
    const before = sockets.accepted.length;
    const g = guard(['127.0.0.1']);
    const client = createFunctionClient({ addressGuard: g });
    client.preconnect({ url });
    const opened = await eventually('the connection opened ahead', async () => sockets.accepted[before]);
    await client.close();
    await eventually('the kept connection closed', async () => sockets.closed.has(opened));
    const lookups = g.lookups;
    client.preconnect({ url });
    await settle();
    expect([g.lookups, sockets.accepted.length]).toEqual([lookups, before + 1]);
  });

  it('never connects to an address the policy refuses, and the call still reports AddressRefused', async () => {
    const before = sockets.accepted.length;
    const refusing = guard(['127.0.0.1'], false);
    const invoker = createHttpInvoker({ addressGuard: refusing });
    invoker.preconnect!({ url });
    // The guard was asked (and refused): the connection ahead goes through it, like a call's.
    await eventually('the guard to be asked', async () => refusing.lookups === 1);
    expect(await invoker(request, { url, timeoutMs: 5000 })).toMatchObject({ kind: 'failed', reason: 'AddressRefused', message: expect.stringMatching(/loopback/) });
    expect(sockets.accepted.length).toBe(before);
    await invoker.close();
  });
});

describe('a function connection opened ahead (https)', () => {
  let server: Server;
  let url = '';
  let ca = '';
  let sockets: ReturnType<typeof counted>;
  beforeAll(async () => {
    const bundle = await generateBundle({ now: new Date(), identity: { service: 'fn', namespace: 'n' } });
    ca = bundle.ca.certPem;
    server = createHttpsServer({ cert: bundle.serving.certPem, key: bundle.serving.keyPem }, (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    sockets = counted(server, 'secureConnection');
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://fn.n.svc:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it("completes the TLS handshake ahead with the Loop's caBundle, and the first call goes over it", async () => {
    const before = sockets.accepted.length;
    const client = createFunctionClient({ addressGuard: guard(['127.0.0.1']) });
    client.preconnect({ url, caBundle: ca });
    await eventually('the handshake done ahead', async () => sockets.accepted.length === before + 1);
    expect(await client.call({ url, body: '{}', timeoutMs: 5000, caBundle: ca })).toMatchObject({ kind: 'reply', value: { ok: true } });
    expect(sockets.accepted.length).toBe(before + 1);
    await client.close();
  });

  it('opens nothing usable without the caBundle, and the call reports Unreachable as before', async () => {
    const before = sockets.accepted.length;
    const g = guard(['127.0.0.1']);
    const client = createFunctionClient({ addressGuard: g });
    client.preconnect({ url });
    await eventually('the connection ahead to be tried', async () => g.lookups === 1);
    expect(await client.call({ url, body: '{}', timeoutMs: 5000 })).toMatchObject({ kind: 'failed', reason: 'Unreachable' });
    expect(sockets.accepted.length).toBe(before);
    await client.close();
  });
});
