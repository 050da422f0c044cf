// `kubeloop diff` against the real control plane: a new pod-name-label that writes another label is reported
// for exactly the annotated pods (exit 1) while a watch sees no write; the same version exits 0; a Loop whose
// ServiceAccount may not list pods exits 2; a Loop's related ConfigMap reaches the function as the router
// sends it; a signed Loop previews with the modules served signing as its key; an admission hook's stricter
// version lists the requests it denies; a pod that changes between the list and the dry-run is diffed again.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run } from '../../cli/commands/diff.ts';
import { dryRunTarget } from '../../cli/diff/dry-run.ts';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { serviceAccountUser } from '../../lib/kube/kube-client.ts';
import type { KubeObject, ReconcileRequest } from '../../lib/contract/types.ts';
import { configHash } from '../../functions/config-reloader/reconcile.ts';
import { reconcilePodNameLabel } from '../../functions/pod-name-label/reconcile.ts';
import { POD_NAME_LABEL_DEFAULTS } from '../../functions/pod-name-label/config.ts';
import requireLabel from '../../functions/require-label/index.ts';
import { defineFunction, respond } from '../../lib/sdk/index.ts';
import { generateSigningSecret } from '../../lib/signing/webhook-signature.ts';
import { serveForTest, type TestServer } from '../../lib/testing/serve.ts';
import type { Informer } from '../../lib/kube/informer.ts';
import { eventually } from '../cluster/eventually.ts';
import { writeTokenKubeconfig } from '../cluster/token-kubeconfig.ts';
import { installCrds, routerHarness, watchPods, type RouterHarness } from '../support/router-harness.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

let h: RouterHarness;
let ns: string;
let loop: string;
let hook: string;
let admission: TestServer;
let idle: TestServer;

async function diff(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
  try {
    const code = await run(args.includes('--kubeconfig') ? args : [...args, '--kubeconfig', h.suite.kubeconfigPath]);
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

async function createPod(name: string, annotated: boolean): Promise<void> {
  // The annotated pods carry the label the running version wrote, as the router would have left them. No
  // scheduler has this name, so no one else writes these pods (kwok and the scheduler would update them).
  await h.client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/pods`,
    body: { metadata: { name, ...(annotated ? { annotations: { [ANNOTATION]: 'true' }, labels: { [LABEL]: name } } : {}) }, spec: { schedulerName: 'kubeloop-diff-test-nobody', containers: [{ name: 'c', image: 'x' }] } },
  });
}

beforeAll(async () => {
  h = await routerHarness('diff');
  ns = h.suite.namespace;
  loop = `diff-${ns}`;
  hook = `diff-${ns}`;
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml', 'clusteradmissionhooks.kubeloop.dev.yaml']);
  const running = await h.serve('pod-name-label');
  await h.createLoop(loop, { serviceAccount: h.loopServiceAccount, namespaces: [ns], for: { apiVersion: 'v1', kind: 'Pod' }, metadataOnly: true, function: { url: running.url } });
  for (const [name, annotated] of [['a1', true], ['a2', true], ['plain', false]] as const) await createPod(name, annotated);
});
afterAll(async () => {
  await admission?.close();
  await idle?.close();
  await h?.client.request({ method: 'DELETE', path: `/apis/kubeloop.dev/v1alpha1/clusteradmissionhooks/${hook}` }).catch(() => undefined);
  await h?.close();
});

describe('kubeloop diff --cluster-loop', () => {
  it('lists exactly the annotated pods for a version that writes another label, exits 1, and writes nothing', async () => {
    const seen: string[] = [];
    const watch: Informer<V1Pod> = await watchPods(h.client, ns);
    try {
      for (const event of ['add', 'update', 'delete'] as const) watch.on(event, (pod: V1Pod) => void seen.push(`${event} ${pod.metadata?.name}`));
      const result = await diff(['--cluster-loop', loop, '--function', fixture('diff/pod-name-label-v2.ts'), '-o', 'json', '--concurrency', '2']);
      expect(result.err).toBe('');
      expect(result.code).toBe(1);
      const report = JSON.parse(result.out) as { summary: Record<string, number>; apiCalls: number; objects: Array<{ object: string; outcome: string; after: Array<{ result: string; changes: Array<{ path: string; after?: unknown }> }> }> };
      expect(report.summary).toMatchObject({ objects: 3, changed: 2, unchanged: 1, errors: 0 });
      expect(report.objects.map((o) => o.object)).toEqual([`Pod ${ns}/a1`, `Pod ${ns}/a2`]);
      // The objects after the new version's patch, as the API server computed them (dry-run) against the live pods.
      for (const [i, object] of report.objects.entries()) {
        expect(object.after).toHaveLength(1);
        expect(object.after[0]?.result).toBe('changed');
        expect(object.after[0]?.changes).toContainEqual({ path: '/metadata/labels/kubeloop.dev~1pod-name-v2', after: `a${i + 1}` });
      }
      expect(report.apiCalls).toBeGreaterThan(0);
      // The text report says the same, per object and field.
      const text = await diff(['--cluster-loop', loop, '--function', fixture('diff/pod-name-label-v2.ts')]);
      expect(text.code).toBe(1);
      expect(text.out.split('\n').filter((line) => line.startsWith('CHANGED'))).toEqual([`CHANGED  Pod ${ns}/a1`, `CHANGED  Pod ${ns}/a2`]);
      expect(text.out).toContain(`      + /metadata/labels/kubeloop.dev~1pod-name-v2: "a1"`);
      expect(text.out).toContain(`    actions on v1 Pod ${ns}/a1 [#0]: only the new version: {"op":"patch"`);

      // Nothing was written: the live pods lack the new label, and a write after the diff is the first thing the
      // watch sees (events arrive in order, so any write the diff made would have come before it).
      for (const name of ['a1', 'a2']) {
        const pod = await h.client.request<V1Pod>({ path: `/api/v1/namespaces/${ns}/pods/${name}` });
        expect(pod.metadata?.labels?.['kubeloop.dev/pod-name-v2']).toBeUndefined();
      }
      await createPod('sentinel', false);
      await eventually('the watch sees the sentinel pod', async () => seen.includes('add sentinel'));
      expect(seen).toEqual(['add sentinel']);
    } finally {
      await watch.stop();
      await h.client.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns}/pods/sentinel` }).catch(() => undefined);
    }
  });

  it('diffs a pod again, as it is now, when it changed between the list and the dry-run, rather than reporting the write refused', async () => {
    // The new version changes pod a1 (as another controller might) before its first answer for it, so that
    // answer's patch tests a resourceVersion that is no longer live: the router would call again, and so does diff.
    // A plain HTTP server, since a function's reconcile cannot wait for a write of its own.
    const seen: string[] = [];
    const changing = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => void (async () => {
        const request = JSON.parse(body) as ReconcileRequest;
        const name = request.object.metadata?.name ?? '';
        seen.push(`${name}@${request.object.metadata?.resourceVersion ?? ''}`);
        if (name === 'a1' && seen.filter((s) => s.startsWith('a1@')).length === 1) {
          await h.client.request({ method: 'PATCH', path: `/api/v1/namespaces/${ns}/pods/a1`, contentType: 'application/merge-patch+json', body: { metadata: { annotations: { 'kubeloop.dev/touched': 'yes' } } } });
        }
        const response = reconcilePodNameLabel(request, { annotation: POD_NAME_LABEL_DEFAULTS.annotation, label: 'kubeloop.dev/pod-name-v2' });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response));
      })());
    });
    await new Promise<void>((resolve) => changing.listen(0, '127.0.0.1', resolve));
    try {
      const result = await diff(['--cluster-loop', loop, '--function', `http://127.0.0.1:${(changing.address() as AddressInfo).port}/`, '-o', 'json']);
      expect(result.err).toBe('');
      const report = JSON.parse(result.out) as { objects: Array<{ object: string; after: Array<{ result: string }> }> };
      const a1 = report.objects.find((o) => o.object === `Pod ${ns}/a1`);
      expect(a1?.after.map((a) => a.result), JSON.stringify(report)).toEqual(['changed']);
      const calls = seen.filter((s) => s.startsWith('a1@'));
      expect(new Set(calls).size, 'a1 is called again at its new resourceVersion').toBe(2);
    } finally {
      changing.closeAllConnections();
      await new Promise((resolve) => changing.close(resolve));
    }
  });

  it('exits 0 when the new version answers as the running one does, with the summary table', async () => {
    const result = await diff(['--cluster-loop', loop, '--function', 'pod-name-label']);
    expect(result.code).toBe(0);
    expect(result.out).not.toMatch(/^CHANGED /m);
    expect(result.out).toMatch(/OBJECTS\s+CHANGED\s+UNCHANGED\s+ERRORS\s+SKIPPED\s+API CALLS\s+SECONDS\n\d+\s+0\s+\d+\s+0\s+0/);
  });

  it("previews a signed Loop: the modules it serves, --function and --baseline, sign with the Loop's key", async () => {
    const signed = `${loop}-signed`;
    const account = h.loopServiceAccount;
    const name = `signing-${ns}`;
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${account.namespace}/secrets`, body: { metadata: { name }, stringData: { secret: generateSigningSecret() } } });
    await h.client.request({ method: 'POST', path: `${rbac}/namespaces/${account.namespace}/roles`, body: { metadata: { name }, rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: [name], verbs: ['get'] }] } });
    await h.client.request({
      method: 'POST',
      path: `${rbac}/namespaces/${account.namespace}/rolebindings`,
      body: { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects: [{ kind: 'ServiceAccount', ...account }] },
    });
    const running = await h.serve('pod-name-label');
    await h.createLoop(signed, { serviceAccount: account, namespaces: [ns], for: { apiVersion: 'v1', kind: 'Pod' }, metadataOnly: true, function: { url: running.url, signingSecretRef: { name, namespace: account.namespace, key: 'secret' } } });
    try {
      const result = await diff(['--cluster-loop', signed, '--function', 'pod-name-label', '--baseline', 'pod-name-label']);
      expect(result.out + result.err).not.toContain('signature');
      expect(result.code, result.out + result.err).toBe(0);
    } finally {
      await h.client.request({ method: 'DELETE', path: `/apis/kubeloop.dev/v1alpha1/clusterloops/${signed}` }).catch(() => undefined);
    }
  });

  it("sends a Loop's related ConfigMap as the router does: the new config-reloader's hash of the live ConfigMap is listed", async () => {
    // The running version does nothing; the new one (functions/config-reloader) hashes the ConfigMap it is sent.
    idle = await serveForTest(defineFunction({ name: 'idle', reconcile: () => respond([]) }));
    const related = `related-${ns}`;
    await h.createLoop(related, {
      serviceAccount: h.loopServiceAccount,
      namespaces: [ns],
      for: { apiVersion: 'apps/v1', kind: 'Deployment' },
      related: [{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: 'kubeloop.dev/config-map' } }],
      function: { url: idle.url },
    });
    const configMap = await h.client.request<KubeObject>({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name: 'web-config' }, data: { level: 'warn' } } });
    const labels = { app: 'web' };
    await h.client.request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${ns}/deployments`,
      body: { metadata: { name: 'web', annotations: { 'kubeloop.dev/config-map': 'web-config' } }, spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'x' }] } } } },
    });
    // The test waits for the Deployment controller's status writes to end (its rollout of 0 replicas ends with
    // Progressing=NewReplicaSetAvailable), so this case reads the related ConfigMap once, not a re-diff.
    await eventually('the Deployment controller to finish its rollout of web', async () => {
      const live = await h.client.request<{ status?: { observedGeneration?: number; conditions?: Array<{ type: string; reason?: string }> } }>({ path: `/apis/apps/v1/namespaces/${ns}/deployments/web` });
      return live.status?.observedGeneration === 1 && (live.status.conditions ?? []).some((c) => c.type === 'Progressing' && c.reason === 'NewReplicaSetAvailable');
    });
    const result = await diff(['--cluster-loop', related, '--function', fileURLToPath(new URL('../../functions/config-reloader/index.ts', import.meta.url)), '-o', 'json']);
    expect(result.err).toBe('');
    expect(result.code).toBe(1);
    const report = JSON.parse(result.out) as { objects: Array<{ object: string; after?: Array<{ result: string; changes: Array<{ path: string; after?: unknown }> }> }> };
    // Without request.related the new version would only warn that the ConfigMap does not exist (no patch).
    expect(report.objects.map((o) => o.object)).toEqual([`Deployment ${ns}/web`]);
    expect(report.objects[0]?.after?.[0]?.changes, JSON.stringify(report.objects[0])).toContainEqual({ path: '/spec/template/metadata/annotations', after: { 'kubeloop.dev/config-hash': configHash(configMap) } });
  });

  it('exits 2 and names the ServiceAccount when it may not list the Loop\'s primaries', async () => {
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/serviceaccounts`, body: { metadata: { name: 'no-rights' } } });
    const forbidden = `diff-forbidden-${ns}`;
    await h.createLoop(forbidden, { serviceAccount: { namespace: ns, name: 'no-rights' }, namespaces: [ns], for: { apiVersion: 'v1', kind: 'Pod' }, function: { url: 'http://127.0.0.1:9/' } });
    const result = await diff(['--cluster-loop', forbidden, '--function', 'pod-name-label', '--baseline', 'pod-name-label']);
    expect(result.code).toBe(2);
    expect(result.err).toContain(`forbidden: the Loop's ServiceAccount ${ns}/no-rights may not list pods in namespace ${ns}`);
    expect(result.out).toBe('');
  });

  it('exits 2 and says so when the caller may read the Loop but not impersonate its ServiceAccount', async () => {
    const reader = `diff-reader-${ns}`;
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/serviceaccounts`, body: { metadata: { name: 'loop-reader' } } });
    await h.client.request({ method: 'POST', path: '/apis/rbac.authorization.k8s.io/v1/clusterroles', body: { metadata: { name: reader }, rules: [{ apiGroups: ['kubeloop.dev'], resources: ['clusterloops'], verbs: ['get'] }] } });
    await h.client.request({
      method: 'POST',
      path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      body: { metadata: { name: reader }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: reader }, subjects: [{ kind: 'ServiceAccount', namespace: ns, name: 'loop-reader' }] },
    });
    try {
      const { status } = await h.client.request<{ status: { token: string } }>({ method: 'POST', path: `/api/v1/namespaces/${ns}/serviceaccounts/loop-reader/token`, body: { spec: { expirationSeconds: 600 } } });
      const kubeconfig = await writeTokenKubeconfig(h.suite.kubeconfigPath, 'loop-reader', status.token, join(mkdtempSync(join(tmpdir(), 'kubeloop-diff-')), 'kubeconfig'));
      const result = await eventually('the reader may get the Loop (RBAC caches catch up)', async () => {
        const r = await diff(['--cluster-loop', loop, '--function', 'pod-name-label', '--kubeconfig', kubeconfig]);
        return !r.err.includes('cannot read Loop') && r;
      });
      expect(result.code).toBe(2);
      expect(result.err).toContain(`forbidden: you may not impersonate the Loop's ServiceAccount ${ns}/${h.loopServiceAccount.name}`);
    } finally {
      await h.client.request({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${reader}` }).catch(() => undefined);
      await h.client.request({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${reader}` }).catch(() => undefined);
    }
  });

  it('exits 2 for a Loop that does not exist, for bad usage and for an unreachable function', async () => {
    expect((await diff(['--cluster-loop', 'no-such-loop', '--function', 'pod-name-label'])).err).toContain('ClusterLoop no-such-loop not found');
    expect((await diff(['--cluster-loop', 'no-such-loop', '--function', 'pod-name-label'])).code).toBe(2);
    expect((await diff(['--cluster-loop', loop])).code).toBe(2);
    // A running version that does not answer leaves every object uncompared: 2, not "no changes".
    const unreachable = await diff(['--cluster-loop', loop, '--function', 'pod-name-label', '--baseline', 'http://127.0.0.1:9/']);
    expect(unreachable.code).toBe(2);
    expect(unreachable.out).toContain(`ERROR    Pod ${ns}/a1: the running version (http://127.0.0.1:9/): POST http://127.0.0.1:9/ failed`);
  });
});

describe('dry-running the new version\'s writes', () => {
  it('sends creates, applies, deletes and status writes as the router would, with dryRun=All as the ServiceAccount, and stores none', async () => {
    const client = h.client.impersonating({ user: serviceAccountUser(ns, h.loopServiceAccount.name) }, { qps: 50, burst: 100 });
    const primary = await h.client.request<KubeObject>({ path: `/api/v1/namespaces/${ns}/pods/a1` });
    const ctx = { client, discovery: new ResourceDiscovery(client), fieldManager: `kubeloop/${loop}`, primary };

    const created = await dryRunTarget(ctx, [{ op: 'create', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'made-' }, data: { a: '1' } } }]);
    expect(created.kind === 'object' && created.live).toBeUndefined();
    const made = created.kind === 'object' ? created.after : undefined;
    expect(made?.metadata?.name).toMatch(/^made-/);
    // In the primary's namespace and owned by it, as the router's prepareChild sends it.
    expect(made?.metadata?.namespace).toBe(ns);
    expect(made?.metadata?.ownerReferences?.[0]).toMatchObject({ uid: primary.metadata?.uid, controller: true });

    const applied = await dryRunTarget(ctx, [{ op: 'apply', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { b: '2' } } }]);
    expect(applied.kind === 'object' && applied.after).toMatchObject({ metadata: { name: 'applied' }, data: { b: '2' } });
    expect(applied.kind === 'object' && applied.after.metadata?.managedFields?.[0]?.manager).toBe(`kubeloop/${loop}`);
    // An apply of the primary itself changes the primary, as the router sends it: it is not made its own child.
    const self = await dryRunTarget(ctx, [{ op: 'apply', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a1', labels: { checked: 'yes' } } } }]);
    expect(self.kind === 'object' && self.live?.metadata?.uid).toBe(primary.metadata?.uid);
    expect(self.kind === 'object' && self.after.metadata?.labels?.checked).toBe('yes');
    expect(self.kind === 'object' && self.after.metadata?.ownerReferences).toBeUndefined();

    const deleted = await dryRunTarget(ctx, [{ op: 'delete', target: { apiVersion: 'v1', kind: 'Pod', namespace: ns, name: 'plain' } }]);
    expect(deleted.kind).toBe('deleted');

    // The primary's whole status through /status, with observedGeneration, as the router writes it.
    const status = await dryRunTarget(ctx, [{ op: 'status', status: { ...(primary as { status?: object }).status, message: 'checked by the new version' } }]);
    expect(status.kind === 'object' && status.after).toMatchObject({ status: { message: 'checked by the new version' } });

    // A patch whose resourceVersion test fails is refused by the server, as the router's write would be.
    const stale = await dryRunTarget(ctx, [{ op: 'patch', target: { apiVersion: 'v1', kind: 'Pod', namespace: ns, name: 'a1' }, patch: [{ op: 'test', path: '/metadata/resourceVersion', value: '1' }, { op: 'add', path: '/metadata/labels/x', value: 'y' }] }]);
    expect(stale.kind).toBe('refused');

    const configMaps = await h.client.request<{ items: KubeObject[] }>({ path: `/api/v1/namespaces/${ns}/configmaps` });
    expect(configMaps.items.map((c) => c.metadata?.name).filter((n) => n === 'applied' || n?.startsWith('made-'))).toEqual([]);
    expect(await h.client.getIfExists({ path: `/api/v1/namespaces/${ns}/pods/plain` })).toBeDefined();
    const a1 = await h.client.request<{ status?: { message?: string } }>({ path: `/api/v1/namespaces/${ns}/pods/a1` });
    expect(a1.status?.message).toBeUndefined();
  });
});

describe('kubeloop diff --cluster-hook', () => {
  it('lists the recorded requests a stricter version would deny, and exits 1', async () => {
    admission = await serveForTest(requireLabel);
    await h.client.request({
      method: 'POST',
      path: '/apis/kubeloop.dev/v1alpha1/clusteradmissionhooks',
      body: {
        apiVersion: 'kubeloop.dev/v1alpha1',
        kind: 'ClusterAdmissionHook',
        metadata: { name: hook },
        // Matches nothing anyone creates, should a gateway of another suite pick it up.
        spec: {
          type: 'validating',
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
          objectSelector: { matchLabels: { 'kubeloop.dev/diff-test': 'never' } },
          function: { url: `${admission.url}/` },
          // Every hook names the ServiceAccount its context is read as (docs/admission.md); this one reads none.
          serviceAccount: h.loopServiceAccount,
        },
      },
    });
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-diff-'));
    const template = JSON.parse(readFileSync(fixture('admission/pod-create-unannotated.json'), 'utf8')) as { request: { name?: string; object: { metadata: Record<string, unknown> } } };
    for (const [name, labels] of [['both', { team: 'a', tier: 'web' }], ['team-only', { team: 'a' }], ['none', {}]] as const) {
      const review = structuredClone(template);
      review.request.name = name;
      review.request.object.metadata = { ...review.request.object.metadata, name, generateName: undefined, labels };
      writeFileSync(join(dir, `${name}.json`), JSON.stringify(review));
    }
    const result = await diff(['--cluster-hook', hook, '--function', fixture('diff/require-team-and-tier.ts'), '--requests', dir]);
    expect(result.err).toBe('');
    expect(result.code).toBe(1);
    const changed = result.out.split('\n').filter((line) => line.startsWith('CHANGED'));
    expect(changed).toEqual([expect.stringMatching(/^CHANGED {2}CREATE Pod \S+\/team-only {2}\(.*team-only\.json\)$/)]);
    expect(result.out).toContain('was: allowed');
    expect(result.out).toContain('now: denied (422): Pod "team-only"');

    const same = await diff(['--cluster-hook', hook, '--function', 'require-label', '--requests', dir]);
    expect(same.code).toBe(0);
  });
});
