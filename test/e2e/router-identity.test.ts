// Per-Loop identity and bounds, attacked: a Loop receives only what its ServiceAccount may list and watch
// (and follows RBAC within seconds as it changes: the router watches RBAC), a function cannot make the router create a privileged pod in
// kube-system nor a cluster-scoped object for a namespaced primary, and a function asking to be called
// again at once is called about once a second.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';
import type { Loop } from '../../api/loop.ts';
import { eventually } from '../cluster/eventually.ts';
import { createLoopServiceAccount } from '../support/loop-service-account.ts';
import { inlineLoop, installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { namespaceAdmin } from './tenant-admin.ts';
import { closeServer } from '../support/close-server.ts';

let h: RouterHarness;
let ns: string;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

beforeAll(async () => {
  h = await routerHarness('router-identity');
  ns = h.suite.namespace;
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml']);
});
afterAll(async () => {
  for (const kind of ['clusterrolebindings', 'clusterroles']) {
    for (const name of [`${ns}-reader`, `${ns}-cluster-writer`, `escape-${ns}`]) await h.client.request({ method: 'DELETE', path: `${RBAC}/${kind}/${name}` }).catch(() => {});
  }
  await h?.close();
});

type Reply = { status?: number; headers?: Record<string, string>; body: Partial<ReconcileResponse> };

/** A real HTTP function that records every request and answers what `reply` says. */
async function recordingFunction(reply: (request: ReconcileRequest) => Reply) {
  const calls: ReconcileRequest[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      const request = JSON.parse(body) as ReconcileRequest;
      calls.push(request);
      const r = reply(request);
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
      res.end(JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [], ...r.body }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, calls, close: () => closeServer(server) };
}

const readyOf = async (name: string) => (await h.loopStatus(name)).ready;

interface EventList {
  items: Array<{ reason?: string; type?: string; note?: string; regarding?: { kind?: string; name?: string } }>;
}
async function eventsAbout(namespace: string, kind: string, name: string) {
  const list = await h.client.request<EventList>({ path: `/apis/events.k8s.io/v1/namespaces/${namespace}/events` });
  return list.items.filter((e) => e.regarding?.kind === kind && e.regarding.name === name);
}

const privilegedPod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'kube-system' },
  spec: { hostPID: true, containers: [{ name: 'c', image: 'busybox:1.36', securityContext: { privileged: true } }] },
});

describe('a Loop receives only what its ServiceAccount may list and watch', () => {
  it('is Forbidden while its ServiceAccount may not list Secrets, sends nothing, and follows RBAC as it changes, within seconds', async () => {
    const fn = await recordingFunction(() => ({ body: {} }));
    try {
      const sa = await createLoopServiceAccount(h.client, { namespace: ns, name: 'no-secrets', rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }] });
      // The tenant: nothing but the built-in admin role in the Loop's namespace.
      const tenant = await namespaceAdmin(h.client, ns, `alice-${ns}`);
      await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/secrets`, body: { metadata: { name: 'token' }, stringData: { password: 'hunter2' } } });
      // The periodic review is an hour away: every change below is seen through the router's RBAC watch.
      const router = await h.router(undefined, { loopSelector: h.loopSelector, accessReviewIntervalMs: 3_600_000 });
      expect((await router.metrics.rbacWatch.get()).values[0]?.value).toBe(1);
      const name = `secrets-${ns}`;
      await h.createLoop(name, { for: { apiVersion: 'v1', kind: 'Secret' }, namespaces: [ns], serviceAccount: sa, function: { url: fn.url } });
      const forbidden = await eventually('Ready=False Forbidden', async () => {
        const c = await readyOf(name);
        return c?.reason === 'Forbidden' && c;
      });
      expect(forbidden.status).toBe('False');
      expect(forbidden.message).toContain(`ServiceAccount ${ns}/no-secrets may not list secrets in namespace ${ns}`);
      const warning = await eventually('a Forbidden Warning event on the Loop', async () => (await eventsAbout('default', 'ClusterLoop', name)).find((e) => e.reason === 'Forbidden'));
      expect(warning.type).toBe('Warning');

      // RBAC granted: the review the Role's change brings starts the Loop and the Secret arrives.
      await tenant.request({
        method: 'PUT',
        path: `${RBAC}/namespaces/${ns}/roles/no-secrets`,
        body: { metadata: { name: 'no-secrets' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }] },
      });
      // Nothing reached the function while it was forbidden: the first call comes after the grant.
      expect(fn.calls).toEqual([]);
      await eventually('Ready=True', async () => (await readyOf(name))?.status === 'True', 30_000);
      await eventually('the Secret sent once allowed', async () => fn.calls.some((c) => c.object.metadata?.name === 'token'));

      // RBAC revoked by the tenant: Forbidden again within seconds (not at the hourly sweep), and a new Secret is not sent.
      await tenant.request({ method: 'DELETE', path: `${RBAC}/namespaces/${ns}/rolebindings/no-secrets` });
      await eventually('Ready=False Forbidden again', async () => (await readyOf(name))?.reason === 'Forbidden', 30_000);
      const before = fn.calls.length;
      await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/secrets`, body: { metadata: { name: 'later' }, stringData: { a: 'b' } } });
      await new Promise((r) => setTimeout(r, 3000));
      expect(fn.calls.slice(before).map((c) => c.object.metadata?.name)).not.toContain('later');

      // Granted back: the Loop starts again and receives what it missed.
      await tenant.request({
        method: 'POST',
        path: `${RBAC}/namespaces/${ns}/rolebindings`,
        body: { metadata: { name: 'no-secrets' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'no-secrets' }, subjects: [{ kind: 'ServiceAccount', name: 'no-secrets', namespace: ns }] },
      });
      await eventually('Ready=True again', async () => (await readyOf(name))?.status === 'True', 30_000);
      await eventually('the Secret created while forbidden, sent once allowed again', async () => fn.calls.slice(before).some((c) => c.object.metadata?.name === 'later'));
    } finally {
      await fn.close();
    }
  }, 120_000);
});

describe('a function cannot reach beyond its Loop', () => {
  it('asks for a privileged pod in kube-system: refused by the authority check and by impersonation, with Warning events, nothing created', async () => {
    const fn = await recordingFunction((request) => ({ body: { actions: [{ op: 'create', object: privilegedPod(`escape-${request.object.metadata?.name ?? 'x'}`) }] } }));
    try {
      // (1) A namespaced primary: the authority check refuses a child outside its namespace.
      await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name: 'greedy', labels: { case: 'greedy' } } } });
      // (2) A cluster-scoped primary (its Namespace) may own objects anywhere, so only the ServiceAccount's RBAC
      // stands between the function and kube-system: it may read pods and namespaces cluster-wide, write only here.
      await h.client.request({
        method: 'POST',
        path: `${RBAC}/clusterroles`,
        body: { metadata: { name: `${ns}-reader` }, rules: [{ apiGroups: [''], resources: ['namespaces', 'pods'], verbs: ['get', 'list', 'watch'] }] },
      });
      await h.client.request({
        method: 'POST',
        path: `${RBAC}/clusterrolebindings`,
        body: {
          metadata: { name: `${ns}-reader` },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-reader` },
          subjects: [{ kind: 'ServiceAccount', name: h.loopServiceAccount.name, namespace: ns }],
        },
      });
      const byNamespace: Loop = {
        apiVersion: 'kubeloop.dev/v1alpha1',
        kind: 'ClusterLoop',
        metadata: { name: 'namespaces', generation: 1 },
        spec: {
          for: { apiVersion: 'v1', kind: 'Namespace' },
          owns: [{ apiVersion: 'v1', kind: 'Pod' }],
          selector: { matchLabels: { 'kubeloop.dev/e2e-suite': ns } },
          serviceAccount: h.loopServiceAccount,
          function: { url: fn.url },
        },
      };
      const byConfigMap = inlineLoop('configmaps', ns, {
        for: { apiVersion: 'v1', kind: 'ConfigMap' },
        owns: [{ apiVersion: 'v1', kind: 'Pod' }],
        selector: { matchLabels: { case: 'greedy' } },
        function: { url: fn.url },
      });
      const router = await h.router([byConfigMap, byNamespace]);
      await router.waitForLoop('configmaps');
      await router.waitForLoop('namespaces');

      const refused = await eventually('ActionRefused on the ConfigMap', async () => (await eventsAbout(ns, 'ConfigMap', 'greedy')).find((e) => e.reason === 'ActionRefused'));
      expect(refused.type).toBe('Warning');
      expect(refused.note).toContain("outside the primary's namespace");
      const failed = await eventually('ActionFailed on the Namespace', async () => (await eventsAbout('default', 'Namespace', ns)).find((e) => e.reason === 'ActionFailed'));
      expect(failed.type).toBe('Warning');
      expect(failed.note).toMatch(new RegExp(`403 Forbidden: .*system:serviceaccount:${ns}:${h.loopServiceAccount.name}.* cannot create resource "pods".* in the namespace "kube-system"`));
      for (const name of ['escape-greedy', `escape-${ns}`]) {
        await expect(h.client.request({ path: `/api/v1/namespaces/kube-system/pods/${name}` }), name).rejects.toThrow('404');
      }
    } finally {
      await fn.close();
    }
  }, 90_000);
});

describe('a namespaced primary\'s function and cluster-scoped objects', () => {
  it('asks for a ClusterRole with the primary\'s namespace written on it: refused by the authority check, Warning event, nothing created', async () => {
    const escape = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `escape-${ns}`, namespace: ns }, rules: [] };
    const fn = await recordingFunction(() => ({ body: { actions: [{ op: 'create', object: escape }] } }));
    try {
      // The ServiceAccount could create the ClusterRole itself: only the router's scope check stands in the way.
      const sa = await createLoopServiceAccount(h.client, { namespace: ns, name: 'cluster-writer', rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'patch'] }] });
      await h.client.request({
        method: 'POST',
        path: `${RBAC}/clusterroles`,
        body: { metadata: { name: `${ns}-cluster-writer` }, rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['get', 'list', 'watch', 'create'] }] },
      });
      await h.client.request({
        method: 'POST',
        path: `${RBAC}/clusterrolebindings`,
        body: {
          metadata: { name: `${ns}-cluster-writer` },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-cluster-writer` },
          subjects: [{ kind: 'ServiceAccount', name: sa.name, namespace: ns }],
        },
      });
      await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name: 'climber', labels: { case: 'climber' } } } });
      const router = await h.router([
        inlineLoop('climber', ns, {
          for: { apiVersion: 'v1', kind: 'ConfigMap' },
          owns: [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' }],
          selector: { matchLabels: { case: 'climber' } },
          serviceAccount: sa,
          function: { url: fn.url },
        }),
      ]);
      await router.waitForLoop('climber');
      const refused = await eventually('ActionRefused on the ConfigMap', async () => (await eventsAbout(ns, 'ConfigMap', 'climber')).find((e) => e.reason === 'ActionRefused'));
      expect(refused.type).toBe('Warning');
      expect(refused.note).toContain(`Loop climber may not create ClusterRole rbac.authorization.k8s.io/v1 escape-${ns}: the kind is cluster-scoped and the primary is namespaced (${ns})`);
      await expect(h.client.request({ path: `${RBAC}/clusterroles/escape-${ns}` })).rejects.toThrow('404');
    } finally {
      await fn.close();
    }
  }, 90_000);
});

describe('an object bomb', () => {
  it('is refused before the router caches it: a Warning event on it and a metric, and its Loop is never sent it', async () => {
    const fn = await recordingFunction(() => ({ body: {} }));
    try {
      const router = await h.router([inlineLoop('bombs', ns, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { case: 'bomb' } }, function: { url: fn.url } })], { maxObjectValues: 1000 });
      await router.waitForLoop('bombs');
      // 2,000 small keys: 30 KB on the wire, over a budget of 1,000 values.
      const data = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, 'x']));
      await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name: 'bomb', labels: { case: 'bomb' } }, data } });
      await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name: 'small', labels: { case: 'bomb' } }, data: { a: 'b' } } });
      const warning = await eventually('ObjectTooLarge on the ConfigMap', async () => (await eventsAbout(ns, 'ConfigMap', 'bomb')).find((e) => e.reason === 'ObjectTooLarge'));
      expect(warning.type).toBe('Warning');
      expect(warning.note).toContain('holds more than 1000 JSON values');
      const refused = (await router.metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'kubeloop_router_objects_refused_total');
      expect(refused?.values.reduce((sum, v) => sum + v.value, 0)).toBeGreaterThanOrEqual(1);
      // The small one is reconciled; the bomb never reaches the function.
      await eventually('the small ConfigMap sent', async () => fn.calls.some((c) => c.object.metadata?.name === 'small'));
      expect(fn.calls.map((c) => c.object.metadata?.name)).not.toContain('bomb');
    } finally {
      await fn.close();
    }
  }, 60_000);
});

describe('the floor on delays a function asks for', () => {
  it('calls a function answering requeueAfterSeconds 0, retryAfterSeconds 0 or Retry-After 0 about once a second', async () => {
    const fn = await recordingFunction((request): Reply => {
      const name = request.object.metadata?.name;
      if (name === 'retry') return { body: { error: { type: 'temporary', message: 'again', retryAfterSeconds: 0 } } };
      if (name === 'throttle') return { status: 429, headers: { 'retry-after': '0' }, body: {} };
      return { body: { requeueAfterSeconds: 0 } };
    });
    try {
      const router = await h.router([inlineLoop('spin', ns, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { case: 'spin' } }, function: { url: fn.url } })]);
      await router.waitForLoop('spin');
      const names = ['requeue', 'retry', 'throttle'];
      for (const name of names) {
        await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name, labels: { case: 'spin' } } } });
      }
      const count = (name: string) => fn.calls.filter((c) => c.object.metadata?.name === name).length;
      await eventually('every key called twice', async () => names.every((n) => count(n) >= 2), 30_000);
      const start = Object.fromEntries(names.map((n) => [n, count(n)]));
      const windowStarted = performance.now();
      await new Promise((r) => setTimeout(r, 5000));
      const seconds = (performance.now() - windowStarted) / 1000;
      for (const name of names) {
        // At most one call per second per key, plus one for the call in flight at each end of the window.
        expect(count(name) - (start[name] ?? 0), name).toBeLessThanOrEqual(Math.ceil(seconds) + 2);
      }
    } finally {
      await fn.close();
    }
  }, 60_000);
});
