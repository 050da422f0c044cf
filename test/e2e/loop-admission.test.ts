// The chart's ValidatingAdmissionPolicy for Loops, installed on the real control plane (bound to this
// suite's Loops only) and attacked: metadata and IP-literal URLs, loopback, the API server, a Loop with no
// ServiceAccount, a creator who may not impersonate the ServiceAccount the Loop names, and an editor who may
// patch Loops but not impersonate re-pointing one (directly, or by labelling a Loop the policy did not
// select). The router re-checks the same URL rules for Loops the policy never saw.
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { DEFAULT_FUNCTION_URL_POLICY } from '../../lib/config/function-url-policy.ts';
import { eventually } from '../cluster/eventually.ts';
import { byKind, renderChart, type Manifest } from './chart-render.ts';
import { installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';

let h: RouterHarness;
let ns: string;
let author: KubeClient;
const loopsPath = '/apis/kubeloop.dev/v1alpha1/clusterloops';
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const name = () => `${ns}-loops`;

beforeAll(async () => {
  h = await routerHarness('loop-admission');
  ns = h.suite.namespace;
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml']);
  const { manifests } = await renderChart(h.suite.binaries.helm, { namespace: ns });
  const ofLoops = (m: Manifest) => m.metadata.name.endsWith('-loops');
  const policy = byKind(manifests, 'ValidatingAdmissionPolicy').find(ofLoops) as (Manifest & { spec: Record<string, unknown> }) | undefined;
  const binding = byKind(manifests, 'ValidatingAdmissionPolicyBinding').find(ofLoops) as (Manifest & { spec: Record<string, unknown> }) | undefined;
  if (!policy || !binding) throw new Error('the chart renders no ValidatingAdmissionPolicy and binding for Loops');
  // The chart's policy as rendered, bound to this suite's Loops only: other suites share the control plane.
  await h.client.request({ method: 'POST', path: `${ADMISSION}/validatingadmissionpolicies`, body: { ...policy, metadata: { name: name() } } });
  await h.client.request({
    method: 'POST',
    path: `${ADMISSION}/validatingadmissionpolicybindings`,
    body: { ...binding, metadata: { name: name() }, spec: { ...binding.spec, policyName: name(), matchResources: { objectSelector: { matchLabels: { 'kubeloop.dev/e2e-admission': ns } } } } },
  });
  // A Loop author: may create Loops, may not impersonate anyone until granted.
  await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/serviceaccounts`, body: { metadata: { name: 'author' } } });
  await h.client.request({ method: 'POST', path: `${RBAC}/clusterroles`, body: { metadata: { name: `${ns}-author` }, rules: [{ apiGroups: ['kubeloop.dev'], resources: ['clusterloops'], verbs: ['create', 'get', 'patch'] }] } });
  await h.client.request({
    method: 'POST',
    path: `${RBAC}/clusterrolebindings`,
    body: { metadata: { name: `${ns}-author` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-author` }, subjects: [{ kind: 'ServiceAccount', name: 'author', namespace: ns }] },
  });
  const token = await h.client.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/serviceaccounts/author/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const admin = h.suite.kubeConfig.getCurrentCluster();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: admin?.server ?? '', caData: admin?.caData, caFile: admin?.caFile }],
    users: [{ name: 'author', token: token.status.token }],
    contexts: [{ name: 'author', cluster: 'local', user: 'author' }],
    currentContext: 'author',
  });
  author = await KubeClient.fromKubeConfig(kc);
});
afterAll(async () => {
  await author?.close();
  for (const path of [`${loopsPath}/repoint-${ns}`, `${loopsPath}/two-step-${ns}`, `${ADMISSION}/validatingadmissionpolicybindings/${name()}`, `${ADMISSION}/validatingadmissionpolicies/${name()}`, `${RBAC}/clusterrolebindings/${ns}-author`, `${RBAC}/clusterroles/${ns}-author`]) {
    await h.client.request({ method: 'DELETE', path }).catch(() => {});
  }
  await h?.close();
});

function loop(url: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'ClusterLoop',
    metadata: { generateName: 'admission-', labels: { 'kubeloop.dev/e2e-admission': ns } },
    spec: { for: { apiVersion: 'v1', kind: 'ConfigMap' }, namespaces: [ns], serviceAccount: h.loopServiceAccount, function: { url }, ...extra },
  };
}

/** Creates the Loop as a dry run; resolves to undefined when admitted, to the refusal's message otherwise. */
async function admit(body: unknown, client: KubeClient = h.client): Promise<string | undefined> {
  try {
    await client.request({ method: 'POST', path: loopsPath, query: { dryRun: 'All' }, body });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** A merge patch of a Loop; resolves to undefined when admitted, to the refusal's message otherwise. */
async function patchAs(client: KubeClient, loopName: string, patch: unknown, dryRun: boolean): Promise<string | undefined> {
  try {
    await client.request({ method: 'PATCH', path: `${loopsPath}/${loopName}`, contentType: 'application/merge-patch+json', ...(dryRun ? { query: { dryRun: 'All' } } : {}), body: patch });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('the chart\'s admission policy for Loops', () => {
  it('type-checks and takes effect', async () => {
    const status = await eventually('the policy type-checked', async () => {
      const p = await h.client.request<{ metadata: { generation: number }; status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: unknown[] } } }>({
        path: `${ADMISSION}/validatingadmissionpolicies/${name()}`,
      });
      return p.status?.observedGeneration === p.metadata.generation && p.status;
    });
    expect(status.typeChecking?.expressionWarnings ?? []).toEqual([]);
    await eventually('a metadata URL refused', async () => (await admit(loop('http://169.254.169.254/')))?.includes(name()));
  });

  it('admits a Loop naming a cluster Service and its ServiceAccount', async () => {
    expect(await admit(loop(`http://fn.${ns}.svc:8080/reconcile`))).toBeUndefined();
    expect(await admit(loop(`https://fn.${ns}.svc.cluster.local/`))).toBeUndefined();
  });

  it('refuses metadata, IP-literal, loopback and API server URLs, and shapes parsers disagree on', async () => {
    const refusals: Array<[string, string]> = [
      ['http://169.254.169.254/latest/meta-data/', 'is an IP literal'],
      ['http://10.96.0.1:443/', 'is an IP literal'],
      ['http://2130706433/', 'is an IP literal'],
      ['http://0x7f.1/', 'is an IP literal'],
      ['http://127.0.0.1:8080/', 'is an IP literal'],
      ['http://[::1]:8080/', 'must be http(s)://<host>'],
      ['http://localhost:8080/', 'is loopback'],
      ['https://kubernetes.default.svc/api', 'is the Kubernetes API server'],
      ['https://kubernetes.default.svc.cluster.local/', 'is the Kubernetes API server'],
      [`http://evil@fn.${ns}.svc/`, 'must be http(s)://<host>'],
      [`http://fn.${ns}.svc\\@169.254.169.254/`, 'must be http(s)://<host>'],
      ['https://functions.example.com/', 'is not a cluster Service'],
    ];
    for (const [url, why] of refusals) {
      const message = await admit(loop(url));
      expect(message, url).toContain(why);
      expect(message, url).toContain(name());
    }
  });

  it('refuses a Loop that names no ServiceAccount', async () => {
    const { serviceAccount: _none, ...spec } = loop(`http://fn.${ns}.svc/`).spec;
    expect(await admit({ ...loop(''), spec })).toContain('spec.serviceAccount { namespace, name } is required');
  });

  it('lets no one who may patch Loops but not impersonate re-point one (dry run and real), while other metadata edits pass', async () => {
    const loopName = `repoint-${ns}`;
    await h.client.request({ method: 'POST', path: loopsPath, body: { ...loop(`http://fn.${ns}.svc/`), metadata: { name: loopName, labels: { 'kubeloop.dev/e2e-admission': ns } } } });
    const repoint = { spec: { function: { url: `http://evil.${ns}.svc/` } } };
    for (const dryRun of [true, false]) {
      const refused = await patchAs(author, loopName, repoint, dryRun);
      expect(refused, `dryRun ${dryRun}`).toContain(`system:serviceaccount:${ns}:author may not impersonate ServiceAccount ${ns}/${h.loopServiceAccount.name}`);
    }
    const stored = await h.client.request<{ spec: { function: { url: string } } }>({ path: `${loopsPath}/${loopName}` });
    expect(stored.spec.function.url).toBe(`http://fn.${ns}.svc/`);
    // An edit that changes neither the spec nor the labels lends nothing.
    expect(await patchAs(author, loopName, { metadata: { annotations: { note: 'reviewed' } } }, false)).toBeUndefined();
  });

  it('refuses the two-step path: a Loop created outside the policy\'s selector, then labelled into it', async () => {
    const loopName = `two-step-${ns}`;
    const unlabelled = { ...loop(`http://evil.${ns}.svc/`), metadata: { name: loopName } };
    expect(await admit(unlabelled, author)).toBeUndefined();
    await author.request({ method: 'POST', path: loopsPath, body: unlabelled });
    for (const dryRun of [true, false]) {
      const refused = await patchAs(author, loopName, { metadata: { labels: { 'kubeloop.dev/e2e-admission': ns } } }, dryRun);
      expect(refused, `dryRun ${dryRun}`).toContain('may not create, change or relabel a Loop that runs as it');
    }
    const stored = await h.client.request<{ metadata: { labels?: Record<string, string> } }>({ path: `${loopsPath}/${loopName}` });
    expect(stored.metadata.labels).toBeUndefined();
  });

  it('lets only someone who may impersonate the ServiceAccount create a Loop that runs as it', async () => {
    const body = loop(`http://fn.${ns}.svc/`);
    expect(await admit(body, author)).toContain(`system:serviceaccount:${ns}:author may not impersonate ServiceAccount ${ns}/${h.loopServiceAccount.name}`);
    await h.client.request({
      method: 'POST',
      path: `${RBAC}/namespaces/${ns}/roles`,
      body: { metadata: { name: 'use-loop-account' }, rules: [{ apiGroups: [''], resources: ['serviceaccounts'], resourceNames: [h.loopServiceAccount.name], verbs: ['impersonate'] }] },
    });
    await h.client.request({
      method: 'POST',
      path: `${RBAC}/namespaces/${ns}/rolebindings`,
      body: { metadata: { name: 'use-loop-account' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'use-loop-account' }, subjects: [{ kind: 'ServiceAccount', name: 'author', namespace: ns }] },
    });
    await eventually('admitted once the author may impersonate it', async () => (await admit(body, author)) === undefined);
  });
});

describe('the router\'s re-check of the same rules', () => {
  it('refuses a Loop the policy never saw that points at the metadata address: Ready=False, nothing started', async () => {
    const router = await h.router(undefined, { loopSelector: h.loopSelector, urlPolicy: DEFAULT_FUNCTION_URL_POLICY });
    const loopName = `metadata-${ns}`;
    await h.createLoop(loopName, loop('http://169.254.169.254/').spec);
    const ready = await eventually('Ready=False InvalidSpec', async () => {
      const { ready } = await h.loopStatus(loopName);
      return ready?.reason === 'InvalidSpec' && ready;
    });
    expect(ready.message).toContain('host 169.254.169.254 is an IP literal');
    expect(router.loops().some((r) => r.loop.name === loopName)).toBe(false);
  });
});
