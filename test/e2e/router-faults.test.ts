// Faults, each ending with every object converged and nothing done twice: the function down for 20 s,
// a function that answers 500s, garbage, 429s and too slowly, and one that reaches outside its authority.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFunction } from '../../functions/registry.ts';
import type { ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';
import type { Informer } from '../../lib/kube/informer.ts';
import { serveFunction } from '../../lib/runtime/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { startTcpProxy } from '../soak/tcp-proxy.ts';
import { inlineLoop, installCrds, routerHarness, watchPods, type RouterHarness } from '../support/router-harness.ts';
import { closeServer } from '../support/close-server.ts';

let h: RouterHarness;
let ns: string;
let pods: Informer<V1Pod>;

beforeAll(async () => {
  h = await routerHarness('router-faults');
  ns = h.suite.namespace;
  await installCrds(h.client, ['podsets.app.kubeloop.dev.yaml']);
  pods = await watchPods(h.client, ns);
});
afterAll(async () => {
  await pods?.stop();
  await h?.close();
});

type Behaviour = 'ok' | '500' | 'garbage' | 'invalid' | '429' | 'slow' | 'outside';

/** A real HTTP function server that misbehaves in a scripted order, then answers like the real function. */
async function scriptedFunction(name: string, script: Behaviour[]): Promise<{ url: string; calls: Behaviour[]; close(): Promise<void> }> {
  const definition = await loadFunction(name);
  const calls: Behaviour[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      const behaviour = script.shift() ?? 'ok';
      calls.push(behaviour);
      const request = JSON.parse(body) as ReconcileRequest;
      const reply = (status: number, text: string, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(text);
      };
      if (behaviour === '500') return reply(500, '{"message":"boom"}');
      if (behaviour === 'garbage') return reply(200, '<html>not json</html>');
      if (behaviour === 'invalid') return reply(200, JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [{ op: 'explode' }] }));
      if (behaviour === '429') return reply(429, '{"message":"busy"}', { 'retry-after': '1' });
      const response: ReconcileResponse = definition.reconcile(request);
      if (behaviour === 'slow') return void setTimeout(() => reply(200, JSON.stringify(response)), 3000);
      if (behaviour === 'outside') {
        response.actions.unshift(
          { op: 'create', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'stolen', namespace: ns }, stringData: { a: 'b' } } },
          { op: 'create', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'elsewhere', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
          { op: 'delete', target: { apiVersion: 'v1', kind: 'Pod', namespace: ns, name: 'bystander' } },
        );
      }
      reply(200, JSON.stringify(response));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, calls, close: () => closeServer(server) };
}

const ownedBy = (uid: string) => (p: V1Pod) => p.metadata?.ownerReferences?.some((r) => r.controller && r.uid === uid) ?? false;

async function createPodSet(name: string, replicas: number): Promise<string> {
  const ps = await h.client.request<{ metadata: { uid: string } }>({
    method: 'POST',
    path: `/apis/app.kubeloop.dev/v1alpha1/namespaces/${ns}/podsets`,
    body: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name, labels: { case: name } }, spec: { replicas } },
  });
  return ps.metadata.uid;
}

function podsetLoop(name: string, url: string, selector: string) {
  return inlineLoop(name, ns, {
    for: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet' },
    owns: [{ apiVersion: 'v1', kind: 'Pod' }],
    selector: { matchLabels: { case: selector } },
    ignoreStatusChanges: true,
    function: { url, timeoutSeconds: 1 },
  });
}

describe('router faults', () => {
  it('creates each pod exactly once when the function is down for 20 s and comes back', async () => {
    // The Loop's URL is a pass-through proxy that drops every connection until the function is up: its
    // port stays ours for the whole test (a free port picked now and bound 20 s later could be taken).
    let upstream: { host: string; port: number } | undefined;
    const proxy = await startTcpProxy(() => (upstream ? [upstream] : []));
    const url = `http://127.0.0.1:${proxy.port}/`;
    const router = await h.router([podsetLoop('down', url, 'down')]);
    await router.waitForLoop('down');
    const uid = await createPodSet('down', 3);
    const seen = new Set<string>();
    const off = pods.on('add', (p) => ownedBy(uid)(p) && seen.add(p.metadata?.name ?? ''));
    try {
      await new Promise((r) => setTimeout(r, 20_000));
      expect(seen.size).toBe(0);
      const served = await serveFunction(await loadFunction('podset'), { port: 0, host: '127.0.0.1', logLevel: 'warn' });
      upstream = { host: '127.0.0.1', port: Number(new URL(served.url).port) };
      try {
        await eventually('3 pods once the function is back', async () => pods.store.list().filter(ownedBy(uid)).length === 3, 60_000);
        // The retry backoff is capped, so the function is called again soon after it returns.
        await new Promise((r) => setTimeout(r, 2000));
        expect(seen.size).toBe(3);
      } finally {
        await served.close();
      }
    } finally {
      off();
      await proxy.close();
    }
  }, 120_000);

  it('rides out 500s, garbage, invalid replies, 429 and timeouts, then converges with each pod created once', async () => {
    const fn = await scriptedFunction('podset', ['500', 'garbage', 'invalid', '429', 'slow', '500']);
    try {
      const router = await h.router([podsetLoop('flaky', fn.url, 'flaky')]);
      await router.waitForLoop('flaky');
      const uid = await createPodSet('flaky', 2);
      const seen = new Set<string>();
      const off = pods.on('add', (p) => ownedBy(uid)(p) && seen.add(p.metadata?.name ?? ''));
      try {
        await eventually('2 pods after the misbehaviour', async () => pods.store.list().filter(ownedBy(uid)).length === 2, 90_000);
        await new Promise((r) => setTimeout(r, 1500));
        expect(seen.size).toBe(2);
      } finally {
        off();
      }
      expect(fn.calls.slice(0, 6)).toEqual(['500', 'garbage', 'invalid', '429', 'slow', '500']);
      const metrics = await router.metrics.registry.getMetricsAsJSON();
      const codes = Object.fromEntries(
        (metrics.find((m) => m.name === 'kubeloop_router_function_calls_total')?.values ?? []).map((v) => [String(v.labels.code), v.value]),
      );
      expect(codes).toMatchObject({ '5xx': 2, invalid: 2, '429': 1, timeout: 1 });
    } finally {
      await fn.close();
    }
  }, 120_000);

  it('refuses actions outside the Loop, reports them, and still applies the rest', async () => {
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/pods`, body: { metadata: { name: 'bystander' }, spec: { containers: [{ name: 'c', image: 'x' }] } } });
    const fn = await scriptedFunction('podset', ['outside']);
    try {
      const router = await h.router([podsetLoop('greedy', fn.url, 'greedy')]);
      await router.waitForLoop('greedy');
      const uid = await createPodSet('greedy', 1);
      await eventually('its own pod created', async () => pods.store.list().filter(ownedBy(uid)).length === 1, 30_000);
      const events = await eventually('ActionRefused warning events', async () => {
        const list = await h.client.request<{ items: Array<{ reason?: string; type?: string; note?: string; regarding?: { name?: string } }> }>({
          path: `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
        });
        const refused = list.items.filter((e) => e.reason === 'ActionRefused' && e.regarding?.name === 'greedy');
        return refused.length === 3 && refused;
      });
      expect(events.every((e) => e.type === 'Warning' && /^Loop greedy may not /.test(e.note ?? ''))).toBe(true);
      await expect(h.client.request({ path: `/api/v1/namespaces/${ns}/secrets/stolen` })).rejects.toThrow('404');
      await expect(h.client.request({ path: '/api/v1/namespaces/default/pods/elsewhere' })).rejects.toThrow('404');
      expect(pods.store.get(`${ns}/bystander`)?.metadata?.deletionTimestamp).toBeUndefined();
      const metrics = await router.metrics.registry.getMetricsAsJSON();
      expect(metrics.find((m) => m.name === 'kubeloop_router_authority_refusals_total')?.values[0]?.value).toBe(3);
    } finally {
      await fn.close();
    }
  });
});
