// charts/kubeloop with users' functions: per-function images (registry, repository, tag, digest, defaults
// from the chart's), functions hosted elsewhere (url: only the Loop is rendered), seeds.enabled=false,
// clusterDomain in Knative URLs, and the schema refusing an entry with neither image nor url.
import { describe, expect, inject, it } from 'vitest';
import { byKind, CHART_DIR, helm, renderChart, valuesFile, type Manifest } from './chart-render.ts';
import { FUNCTIONS as SEEDS } from './chart-fixtures.ts';

const helmBinary = inject('clusterBinaries').helm;
const namespace = 'platform';
const DIGEST = 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';

const USER_FUNCTIONS = {
  'cm-labeller': { image: { registry: 'registry.example.com/team', repository: 'cm-labeller', tag: '1.2.3', pullPolicy: 'Always' }, loop: { for: { apiVersion: 'v1', kind: 'ConfigMap' } } },
  pinned: { image: { repository: 'pinned', digest: DIGEST }, loop: { for: { apiVersion: 'v1', kind: 'Secret' } } },
  remote: { url: 'https://remote.example.com/reconcile', loop: { for: { apiVersion: 'apps/v1', kind: 'Deployment' }, owns: [{ apiVersion: 'v1', kind: 'Service' }] } },
};

interface Container {
  image: string;
  imagePullPolicy: string;
}

function functionContainers(manifests: Manifest[]): Record<string, Container> {
  const out: Record<string, Container> = {};
  for (const deployment of byKind(manifests, 'Deployment')) {
    const labels = (deployment.metadata as { labels?: Record<string, string> }).labels ?? {};
    const fn = labels['kubeloop.dev/function'];
    const container = (deployment as unknown as { spec: { template: { spec: { containers: Container[] } } } }).spec.template.spec.containers[0];
    if (fn && container) out[fn] = container;
  }
  return out;
}

function loopUrls(manifests: Manifest[]): Record<string, string> {
  return Object.fromEntries(byKind(manifests, 'ClusterLoop').map((loop) => [loop.metadata.name, (loop as unknown as { spec: { function: { url: string } } }).spec.function.url]));
}

describe('helm template with users\' functions beside the seeds', () => {
  it('runs each function from its own image, defaulting registry, tag and pull policy to the chart\'s', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace, values: { image: { registry: 'mirror.example.com/kubeloop', tag: '9.9.9' }, functions: USER_FUNCTIONS } });
    const containers = functionContainers(manifests);
    expect(containers['cm-labeller']).toMatchObject({ image: 'registry.example.com/team/cm-labeller:1.2.3', imagePullPolicy: 'Always' });
    expect(containers.pinned).toMatchObject({ image: `mirror.example.com/kubeloop/pinned@${DIGEST}`, imagePullPolicy: 'IfNotPresent' });
    expect(containers['pod-name-label']?.image).toBe('mirror.example.com/kubeloop/function-pod-name-label:9.9.9');
  });

  it('renders only the Loop (and its RBAC) for a function with a url: no Deployment, no Service', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace, values: { functions: USER_FUNCTIONS } });
    expect(loopUrls(manifests)['kubeloop-remote']).toBe('https://remote.example.com/reconcile');
    const named = (kind: string) => byKind(manifests, kind).map((m) => m.metadata.name);
    expect(named('Deployment')).not.toContain('kubeloop-remote');
    expect(named('Service')).not.toContain('kubeloop-remote');
    expect(Object.keys(functionContainers(manifests))).not.toContain('remote');
    // The router still needs the rights the remote function's Loop implies.
    expect(named('ClusterRole')).toContain('kubeloop-router-loop-remote');
    expect(loopUrls(manifests)['kubeloop-cm-labeller']).toBe(`http://kubeloop-cm-labeller.${namespace}.svc:8080/reconcile`);
  });

  it('allows the external function\'s host in the router and the Loop admission policy, besides loopAdmission.allowedHosts', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace, values: { functions: USER_FUNCTIONS, loopAdmission: { allowedHosts: ['*.corp.example.com'] } } });
    const router = byKind(manifests, 'Deployment').find((d) => d.metadata.name === 'kubeloop-router') as unknown as { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } };
    expect(router.spec.template.spec.containers[0]?.args).toContain('--function-hosts=*.corp.example.com,remote.example.com');
    expect(JSON.stringify(byKind(manifests, 'ValidatingAdmissionPolicy'))).toContain('[\\"*.corp.example.com\\",\\"remote.example.com\\"]');
  });
});

describe('helm template with seeds.enabled=false', () => {
  it('renders no seed function, Loop or Loop RBAC, and keeps the users\' functions', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace, values: { seeds: { enabled: false }, functions: USER_FUNCTIONS } });
    expect(Object.keys(loopUrls(manifests)).sort()).toEqual(['kubeloop-cm-labeller', 'kubeloop-pinned', 'kubeloop-remote']);
    expect(Object.keys(functionContainers(manifests)).sort()).toEqual(['cm-labeller', 'pinned']);
    const names = manifests.map((m) => `${m.kind}/${m.metadata.name}`);
    for (const seed of SEEDS) expect(names.filter((n) => n.endsWith(`-${seed}`) || n.endsWith(`-loop-${seed}`))).toEqual([]);
  });

  it('renders no function at all with seeds off and no functions of one\'s own', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace, values: { seeds: { enabled: false } } });
    expect(byKind(manifests, 'ClusterLoop')).toEqual([]);
    expect(Object.keys(functionContainers(manifests))).toEqual([]);
  });
});

describe('clusterDomain', () => {
  it('builds Knative function URLs from it instead of cluster.local', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace, values: { clusterDomain: 'corp.internal', functionDefaults: { runtime: 'knative' } } });
    expect(new URL(loopUrls(manifests)['kubeloop-podset'] ?? '').host).toBe(`kubeloop-podset.${namespace}.svc.corp.internal`);
    expect(manifests.map((m) => JSON.stringify(m)).join('\n')).not.toContain('cluster.local');
  });
});

describe('values.schema.json for functions', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['a function with neither image nor url', { functions: { lost: { loop: { for: { apiVersion: 'v1', kind: 'Pod' } } } } }, /\/functions\/lost': missing property 'image'/],
    ['an image without a repository', { functions: { x: { image: { tag: '1' }, loop: { for: { apiVersion: 'v1', kind: 'Pod' } } } } }, /\/functions\/x\/image': missing property 'repository'/],
    ['a url that is not http(s)', { functions: { x: { url: 'ftp://x', loop: { for: { apiVersion: 'v1', kind: 'Pod' } } } } }, /\/functions\/x\/url'/],
    ['seeds.enabled that is not a boolean', { seeds: { enabled: 'yes please' } }, /\/seeds\/enabled': got string, want boolean/],
  ];
  it.each(cases)('rejects %s, naming the setting', async (_what, values, message) => {
    const file = await valuesFile(values);
    try {
      const result = await helm(helmBinary, ['template', 'kubeloop', CHART_DIR, '--kube-version', '1.35.0', ...file.args]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(message);
    } finally {
      await file.cleanup();
    }
  });
});

describe('the router\'s read access for spec.function.ref', () => {
  const refRules = async (values: Record<string, unknown>) => {
    const { manifests } = await renderChart(helmBinary, { namespace, values });
    const role = byKind(manifests, 'ClusterRole').find((r) => r.metadata.name === 'kubeloop-router-loops') as unknown as { rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> };
    return role.rules.filter((r) => r.resources.includes('services'));
  };
  const READ = ['get', 'list', 'watch'];

  it('reads Services always, and Knative Services only with a knative function or router.rbac.knativeServices', async () => {
    expect(await refRules({})).toEqual([{ apiGroups: [''], resources: ['services'], verbs: READ }]);
    const knative = [{ apiGroups: [''], resources: ['services'], verbs: READ }, { apiGroups: ['serving.knative.dev'], resources: ['services'], verbs: READ }];
    expect(await refRules({ functions: { podset: { runtime: 'knative' } } })).toEqual(knative);
    expect(await refRules({ router: { rbac: { knativeServices: true } } })).toEqual(knative);
  });
});
