// samples/tenants/team-a.yaml, the team namespace docs/tenants.md points to: applicable with `kubectl apply -n`
// by a namespace admin (no namespace named, nothing cluster-scoped), and whole: the Loop and the hook call
// Services of the file whose Deployments serve the functions they name, as accounts of the file.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const SAMPLE = 'samples/tenants/team-a.yaml';
const root = new URL('../../', import.meta.url);
type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: Record<string, unknown>; subjects?: Array<Record<string, string>>; roleRef?: { kind: string; name: string } };
const docs = parseAllDocuments(readFileSync(new URL(SAMPLE, root), 'utf8')).map((d) => d.toJS() as Doc);
const named = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name);

describe(SAMPLE, () => {
  it('holds only namespaced kinds a namespace admin may create, none naming a namespace', () => {
    expect([...new Set(docs.map((d) => d.kind))].sort()).toEqual(['AdmissionHook', 'Deployment', 'Loop', 'Role', 'RoleBinding', 'Service', 'ServiceAccount']);
    expect(docs.filter((d) => d.metadata.namespace !== undefined)).toEqual([]);
    // The one namespace named: the chart's router, granted what it needs for the Loop in this namespace only.
    const routerGrant = named('RoleBinding', 'pod-name-label-kubeloop-router');
    expect(routerGrant?.subjects).toEqual([{ kind: 'ServiceAccount', namespace: 'kubeloop-system', name: 'kubeloop-router' }]);
    expect(JSON.stringify(docs.filter((d) => d !== routerGrant))).not.toMatch(/"namespace"/);
    expect((named('Role', 'pod-name-label-kubeloop-router') as unknown as { rules: unknown[] }).rules).toEqual([
      { apiGroups: [''], resources: ['serviceaccounts'], resourceNames: ['pod-name-label'], verbs: ['impersonate'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
    ]);
  });

  it('runs the Loop as a ServiceAccount of the file bound to a Role, calling a Service of the file that selects the function', () => {
    const loop = named('Loop', 'pod-name-label') as Doc & { spec: { serviceAccount: { name: string }; function: { ref: { name: string; port: number } } } };
    expect(named('ServiceAccount', loop.spec.serviceAccount.name)).toBeDefined();
    const binding = docs.find((d) => d.kind === 'RoleBinding' && d.subjects?.some((s) => s.kind === 'ServiceAccount' && s.name === loop.spec.serviceAccount.name && s.namespace === undefined));
    expect(binding?.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-name-label' });
    expect(named('Role', binding?.roleRef?.name ?? '')).toBeDefined();
    servesFunction(loop.spec.function.ref.name, loop.spec.function.ref.port, 'pod-name-label');
  });

  it("sends the hook's requests to a Service of the file that serves require-label, as a ServiceAccount of the file", () => {
    const hook = named('AdmissionHook', 'require-team-label') as Doc & { spec: { serviceAccount: { name: string }; function: { service: { name: string; port: number } } } };
    expect(named('ServiceAccount', hook.spec.serviceAccount.name)).toBeDefined();
    servesFunction(hook.spec.function.service.name, hook.spec.function.service.port, 'require-label');
  });

  it('is the sample docs/tenants.md applies', () => {
    expect(readFileSync(new URL('docs/tenants.md', root), 'utf8')).toContain(`kubectl apply -n team-a -f ${SAMPLE}`);
  });
});

/** The Service `name` exposes `port` on pods of a Deployment in the file whose container serves `fn`. */
function servesFunction(name: string, port: number, fn: string): void {
  const service = named('Service', name) as Doc & { spec: { selector: Record<string, string>; ports: Array<{ port: number; targetPort: string }> } };
  expect(service.spec.ports.map((p) => p.port)).toContain(port);
  type Container = { image: string; command?: string[]; args: string[]; ports: Array<{ name: string; containerPort: number }> };
  const deployment = docs.find((d) => d.kind === 'Deployment' && Object.entries(service.spec.selector).every(([k, v]) => (d.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels[k] === v));
  const [container] = (deployment?.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers;
  // The image's entrypoint serves pod-name-label; another built-in function is named by the command.
  expect(container?.command?.slice(2) ?? ['function', 'pod-name-label']).toEqual(['function', fn]);
  expect(container?.image).toBe('ghcr.io/kubeloop/function-pod-name-label:0.1.0');
  expect(container?.args).toContain(`--port=${container?.ports[0]?.containerPort}`);
}
