// Related objects on the real control plane: the config-reloader (a Deployment follows the ConfigMap it
// names; only the Deployments naming it are called), a Service's selector -> its pods, a cluster-scoped
// StorageClass named in a CR, and `requires` (a Secret asked for, sent on the next call, watched).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { reconcileConfigReloader, CONFIG_HASH_ANNOTATION, CONFIG_MAP_ANNOTATION } from '../../functions/config-reloader/reconcile.ts';
import { serveFunction } from '../../lib/runtime/index.ts';
import { defineFunction, patchAction, relatedOf, requires, respond, statusAction, type KubeObject, type Reconcile, type ReconcileRequest } from '../../lib/sdk/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { createLoopServiceAccount } from '../support/loop-service-account.ts';
import { inlineLoop, installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';

let h: RouterHarness;
let ns: string;
const calls = { forbidden: [] as ReconcileRequest[], reloader: [] as ReconcileRequest[], service: [] as ReconcileRequest[], claim: [] as ReconcileRequest[], secret: [] as ReconcileRequest[] };
const CLAIMS_CRD = 'claims.related.kubeloop.dev';
const clusterRole = () => `kubeloop-related-${ns}`;

/** Serves `reconcile` on a free port, recording every request it is sent. */
async function served(name: keyof typeof calls, reconcile: Reconcile): Promise<string> {
  const fn = await serveFunction(defineFunction({ name: `related-${name}`, reconcile: (request) => (calls[name].push(request), reconcile(request)) }), { port: 0, host: '127.0.0.1', logLevel: 'warn' });
  afterAllClose.push(() => fn.close());
  return fn.url;
}
const afterAllClose: Array<() => Promise<void>> = [];

const api = {
  get: <T = KubeObject>(path: string) => h.client.request<T>({ path }),
  post: (path: string, body: unknown) => h.client.request({ method: 'POST', path, body }),
  merge: (path: string, body: unknown) => h.client.request({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body }),
  delete: (path: string) => h.client.request({ method: 'DELETE', path }),
};

function annotation(object: KubeObject, key: string): string | undefined {
  return object.metadata?.annotations?.[key];
}

beforeAll(async () => {
  h = await routerHarness('router-related');
  ns = h.suite.namespace;
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-related-'));
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CLAIMS_CRD },
    spec: {
      group: 'related.kubeloop.dev',
      scope: 'Namespaced',
      names: { kind: 'Claim', plural: 'claims', singular: 'claim', listKind: 'ClaimList' },
      versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
  writeFileSync(join(dir, 'claims.yaml'), stringify(crd));
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml', join(dir, 'claims.yaml')]);
  // StorageClasses are cluster-scoped: the Loop's ServiceAccount needs a ClusterRole to list and watch them.
  await api.post('/apis/rbac.authorization.k8s.io/v1/clusterroles', { metadata: { name: clusterRole() }, rules: [{ apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list', 'watch'] }] });
  await api.post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: clusterRole() },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole() },
    subjects: [{ kind: 'ServiceAccount', ...h.loopServiceAccount }],
  });

  const reloader = await served('reloader', reconcileConfigReloader);
  const service = await served('service', (request) => {
    const pods = relatedOf(request, 'pods').map((p) => p.metadata?.name ?? '').join(',');
    return respond([annotation(request.object, 'kubeloop.dev/selected-pods') === pods ? undefined : patchAction(request.object, (d) => void (d.metadata!.annotations = { ...d.metadata!.annotations, 'kubeloop.dev/selected-pods': pods }))]);
  });
  const claim = await served('claim', (request) => {
    const storageClass = relatedOf(request, 'class')[0] as (KubeObject & { provisioner?: string }) | undefined;
    return respond([statusAction(request.object, { provisioner: storageClass?.provisioner ?? 'missing' })]);
  });
  const secret = await served('secret', (request) => {
    const data = request.object.data as Record<string, string> | undefined;
    const name = data?.secret;
    if (!name) return respond([]);
    const found = relatedOf(request, 'credentials')[0];
    const value = found ? Buffer.from((found.data as Record<string, string>).value ?? '', 'base64').toString() : 'missing';
    const actions = annotation(request.object, 'kubeloop.dev/secret-value') === value ? [] : [patchAction(request.object, (d) => void (d.metadata!.annotations = { ...d.metadata!.annotations, 'kubeloop.dev/secret-value': value }))];
    // A greedy answer asks for another Secret on every call (the reconcile id differs): it never settles.
    const wanted = data.greedy === 'true' ? `${name}-${request.reconcileId ?? ''}` : name;
    return respond(actions, { requires: [requires('credentials', { apiVersion: 'v1', kind: 'Secret' }, { names: wanted, ...(data.namespace ? { namespace: data.namespace } : {}) })] });
  });

  const router = await h.router([
    inlineLoop('config-reloader', ns, {
      for: { apiVersion: 'apps/v1', kind: 'Deployment' },
      ignoreStatusChanges: true,
      related: [{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: CONFIG_MAP_ANNOTATION } }],
      function: { url: reloader },
    }),
    inlineLoop('service-pods', ns, {
      for: { apiVersion: 'v1', kind: 'Service' },
      related: [{ name: 'pods', apiVersion: 'v1', kind: 'Pod', selectorFrom: { fieldPath: 'spec.selector' }, metadataOnly: true }],
      function: { url: service },
    }),
    inlineLoop('claim-class', ns, {
      for: { apiVersion: 'related.kubeloop.dev/v1', kind: 'Claim' },
      ignoreStatusChanges: true,
      related: [{ name: 'class', apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', nameFrom: { fieldPath: 'spec.storageClassName' }, fields: ['provisioner'] }],
      function: { url: claim },
    }),
    inlineLoop('secret-reader', ns, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { app: 'reader' } }, function: { url: secret } }),
  ]);
  for (const loop of ['config-reloader', 'service-pods', 'claim-class', 'secret-reader']) await router.waitForLoop(loop);
}, 120_000);
afterAll(async () => {
  for (const close of afterAllClose) await close().catch(() => {});
  for (const kind of ['clusterrolebindings', 'clusterroles']) await api.delete(`/apis/rbac.authorization.k8s.io/v1/${kind}/${clusterRole()}`).catch(() => {});
  await api.delete(`/apis/storage.k8s.io/v1/storageclasses/${clusterRole()}`).catch(() => {});
  await h?.close();
});

function deployment(name: string, configMap: string): unknown {
  const labels = { app: name };
  return {
    metadata: { name, annotations: { [CONFIG_MAP_ANNOTATION]: configMap } },
    spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
  };
}

const templateHash = async (name: string) => annotation((await api.get<KubeObject & { spec: { template: KubeObject } }>(`/apis/apps/v1/namespaces/${ns}/deployments/${name}`)).spec.template, CONFIG_HASH_ANNOTATION);

describe('related objects', () => {
  it('config-reloader: a ConfigMap edit rolls exactly the Deployments naming it; its deletion is reported', async () => {
    for (const [name, data] of [['shared', { level: 'info' }], ['other', { level: 'debug' }]] as const) await api.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name }, data });
    for (const [name, cm] of [['web', 'shared'], ['api', 'shared'], ['batch', 'other']] as const) await api.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment(name, cm));
    const first = await eventually('every Deployment annotated with its ConfigMap hash', async () => {
      const hashes = await Promise.all(['web', 'api', 'batch'].map(templateHash));
      return hashes.every((x) => x !== undefined) && hashes;
    });
    expect(first[0]).toBe(first[1]);
    expect(first[2]).not.toBe(first[0]);

    const before = calls.reloader.length;
    await api.merge(`/api/v1/namespaces/${ns}/configmaps/shared`, { data: { level: 'warn' } });
    await eventually('web and api rolled to the new hash', async () => (await templateHash('web')) !== first[0] && (await templateHash('api')) !== first[0]);
    const after = calls.reloader.slice(before);
    // The two Deployments naming it are called with the edited ConfigMap; the third is not called for it.
    const sentEdited = (name: string) => after.some((r) => r.object.metadata?.name === name && (r.related?.config?.[0] as { data?: { level?: string } } | undefined)?.data?.level === 'warn');
    expect(['web', 'api'].filter(sentEdited)).toEqual(['web', 'api']);
    // A call names the ConfigMap as its trigger unless the queue merged it with a later event for the same key
    // (the Deployment controller's own writes): the call reads the ConfigMap as it is then either way.
    const related = after.filter((r) => r.trigger.type === 'RELATED');
    expect(related.every((r) => ['api', 'web'].includes(r.object.metadata?.name ?? '') && r.trigger.related?.name === 'config' && r.trigger.related.object.name === 'shared'), JSON.stringify(related.map((r) => r.trigger))).toBe(true);
    // (batch may still get a MODIFIED call: the Deployment controller annotates its revision when it likes.)
    expect(after.filter((r) => r.object.metadata?.name === 'batch' && r.trigger.type === 'RELATED')).toEqual([]);
    expect(await templateHash('batch')).toBe(first[2]);

    await api.delete(`/api/v1/namespaces/${ns}/configmaps/other`);
    await eventually('ConfigMapNotFound reported on batch', async () => {
      const events = await api.get<{ items: Array<{ reason?: string; regarding?: { name?: string } }> }>(`/apis/events.k8s.io/v1/namespaces/${ns}/events`);
      return events.items.some((e) => e.reason === 'ConfigMapNotFound' && e.regarding?.name === 'batch');
    });
    // Called with the ConfigMap gone (whatever the trigger hint of that call, see above).
    expect(calls.reloader.some((r) => r.object.metadata?.name === 'batch' && Array.isArray(r.related?.config) && r.related.config.length === 0)).toBe(true);
    expect(await templateHash('batch')).toBe(first[2]);
  });

  it('a Service is sent the pods its selector selects, and called again as pods join and leave', async () => {
    await api.post(`/api/v1/namespaces/${ns}/services`, { metadata: { name: 'front' }, spec: { selector: { tier: 'front' }, ports: [{ port: 80 }] } });
    for (const [name, tier] of [['f1', 'front'], ['f2', 'front'], ['b1', 'back']]) {
      await api.post(`/api/v1/namespaces/${ns}/pods`, { metadata: { name, labels: { tier: tier! } }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    }
    const selected = async () => annotation(await api.get(`/api/v1/namespaces/${ns}/services/front`), 'kubeloop.dev/selected-pods');
    await eventually('front selects f1,f2', async () => (await selected()) === 'f1,f2');
    await api.merge(`/api/v1/namespaces/${ns}/pods/f2`, { metadata: { labels: { tier: 'back' } } });
    await eventually('f2 left the selector', async () => (await selected()) === 'f1');
    await api.merge(`/api/v1/namespaces/${ns}/pods/b1`, { metadata: { labels: { tier: 'front' } } });
    await eventually('b1 joined the selector', async () => (await selected()) === 'b1,f1');
    // Sent metadata only, as the entry asks.
    const last = calls.service.at(-1);
    expect(last?.related?.pods?.[0]?.spec).toBeUndefined();
  });

  it('a cluster-scoped StorageClass named in a Claim is sent projected, and its appearance calls the Claim', async () => {
    await api.post(`/apis/related.kubeloop.dev/v1/namespaces/${ns}/claims`, { apiVersion: 'related.kubeloop.dev/v1', kind: 'Claim', metadata: { name: 'data' }, spec: { storageClassName: clusterRole() } });
    const provisioner = async () => ((await api.get<{ status?: { provisioner?: string } }>(`/apis/related.kubeloop.dev/v1/namespaces/${ns}/claims/data`)).status?.provisioner);
    await eventually('the claim reports its class missing', async () => (await provisioner()) === 'missing');
    await api.post('/apis/storage.k8s.io/v1/storageclasses', { metadata: { name: clusterRole(), labels: { big: 'x'.repeat(50) } }, provisioner: 'example.com/fast', parameters: { tier: 'gold' } });
    await eventually('the class appearing calls the claim', async () => (await provisioner()) === 'example.com/fast');
    const sent = calls.claim.find((r) => (r.related?.class?.length ?? 0) > 0)?.related?.class?.[0];
    expect(sent).toMatchObject({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', provisioner: 'example.com/fast' });
    expect(sent?.parameters).toBeUndefined();
  });

  it('requires: a Secret the function asks for is sent on the next call, and its change calls again', async () => {
    await api.post(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 'db' }, stringData: { value: 'first' } });
    await api.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'reader', labels: { app: 'reader' } }, data: { secret: 'db' } });
    const seen = async () => annotation(await api.get(`/api/v1/namespaces/${ns}/configmaps/reader`), 'kubeloop.dev/secret-value');
    await eventually('the secret value seen', async () => (await seen()) === 'first');
    // The first call had no Secret and asked for it; the second carried it.
    expect(calls.secret[0]?.related).toBeUndefined();
    expect(calls.secret[1]?.related?.credentials?.[0]?.metadata?.name).toBe('db');
    await api.merge(`/api/v1/namespaces/${ns}/secrets/db`, { stringData: { value: 'second' } });
    await eventually('the secret change calls again', async () => (await seen()) === 'second');
    expect(calls.secret.some((r) => r.trigger.type === 'RELATED' && r.trigger.related?.name === 'credentials')).toBe(true);
  });

  it('requires: an answer asking for something else on every call stops at the bound with a Warning, nothing applied', async () => {
    await api.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'greedy', labels: { app: 'reader' } }, data: { secret: 'db', greedy: 'true' } });
    await eventually('a RequiresExceeded Warning on the ConfigMap', async () => {
      const events = await api.get<{ items: Array<{ reason?: string; note?: string; regarding?: { name?: string } }> }>(`/apis/events.k8s.io/v1/namespaces/${ns}/events`);
      return events.items.find((e) => e.reason === 'RequiresExceeded' && e.regarding?.name === 'greedy')?.note?.includes('at most 4 calls per reconcile');
    });
    expect(calls.secret.filter((r) => r.object.metadata?.name === 'greedy').length).toBeGreaterThanOrEqual(4);
    expect(annotation(await api.get(`/api/v1/namespaces/${ns}/configmaps/greedy`), 'kubeloop.dev/secret-value')).toBeUndefined();
  });

  it('requires: a Secret in a namespace the ServiceAccount may not read is Forbidden, and never sent', async () => {
    await api.post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'thief', labels: { app: 'reader' } }, data: { secret: 'extension-apiserver-authentication', namespace: 'kube-system' } });
    await eventually('a Forbidden Warning on the ConfigMap', async () => {
      const events = await api.get<{ items: Array<{ reason?: string; note?: string; regarding?: { name?: string } }> }>(`/apis/events.k8s.io/v1/namespaces/${ns}/events`);
      return events.items.find((e) => e.reason === 'Forbidden' && e.regarding?.name === 'thief')?.note?.includes('secrets in namespace kube-system');
    });
    const sent = calls.secret.filter((r) => r.object.metadata?.name === 'thief');
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((r) => (r.related?.credentials ?? []).length === 0)).toBe(true);
    expect(annotation(await api.get(`/api/v1/namespaces/${ns}/configmaps/thief`), 'kubeloop.dev/secret-value')).toBeUndefined();
  });
});

describe('a Loop whose ServiceAccount may not read a related kind', () => {
  it('is Ready=False with reason Forbidden naming the kind and namespace, and its function is sent nothing', async () => {
    const account = await createLoopServiceAccount(h.client, { namespace: ns, name: 'deployments-only', rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] }] });
    const url = await served('forbidden', () => respond([]));
    const router = await h.router(undefined, { loopSelector: h.loopSelector });
    await h.createLoop(`reloader-${ns}`, {
      for: { apiVersion: 'apps/v1', kind: 'Deployment' },
      namespaces: [ns],
      serviceAccount: account,
      related: [{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: CONFIG_MAP_ANNOTATION } }],
      function: { url },
    });
    const ready = await eventually('Ready=False Forbidden', async () => {
      const { ready } = await h.loopStatus(`reloader-${ns}`);
      return ready?.reason === 'Forbidden' && ready;
    });
    expect(ready.status).toBe('False');
    expect(ready.message).toContain(`configmaps in namespace ${ns}`);
    // No runner for it, so none of the Deployments of the first test (in this namespace) was sent.
    expect(router.loops().map((r) => r.loop.name)).not.toContain(`reloader-${ns}`);
    expect(calls.forbidden).toEqual([]);
  });
});
