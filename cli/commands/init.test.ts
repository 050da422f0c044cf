// `kubeloop init` in-process: the files it writes, its refusals, and that the generated function answers
// its own recorded fixture over HTTP (imports of 'kubeloop' pointed at this checkout; test/e2e/package.test.ts
// does the same from a packed tarball with npm install).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import type { FunctionDefinition } from '../../lib/sdk/define-function.ts';
import { describeFailures, replayFixtures } from '../../lib/testing/index.ts';
import { captureCommand } from '../../test/http/capture-console.ts';
import { rootOverrides, run } from './init.ts';
import { run as render } from './render.ts';
import { FUNCTION_NODE_FLAGS } from '../node-flags.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'kubeloop-init-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function init(argv: string[]): Promise<{ code: number; output: string }> {
  return captureCommand(run, argv);
}

describe('kubeloop init', () => {
  const dir = join(root, 'widget-labeller');

  it('writes a function project for the given kinds, namespaced: a Loop, its account and Role, the function, no namespace named', async () => {
    const { code, output } = await init([dir, '--for', 'apps/v1/Deployment', '--owns', 'v1/ConfigMap']);
    expect(code).toBe(0);
    expect(output).toContain('created widget-labeller: a function for Deployment (apps/v1)');
    for (const file of ['deployment.yaml', 'src/index.ts', 'test/index.test.ts', 'fixtures/labels-new-object.json', 'Dockerfile', 'loop.yaml', 'function.yaml', 'package.json', 'tsconfig.json', 'README.md']) {
      expect(existsSync(join(dir, file)), file).toBe(true);
    }
    // Its image starts node as kubeloop's own function images do (test/real-node/tenant-on-real-node.test.ts runs it).
    const entrypoint = /^ENTRYPOINT (.*)$/m.exec(readFileSync(join(dir, 'Dockerfile'), 'utf8'))?.[1];
    expect(JSON.parse(entrypoint ?? 'null')).toEqual(['/nodejs/bin/node', ...FUNCTION_NODE_FLAGS, 'node_modules/kubeloop/cli/bin.js', 'function', 'dist/index.js']);
    // A namespace admin's project: nothing cluster-scoped, nothing in kubeloop-system, no chart values.
    expect(existsSync(join(dir, 'values.yaml'))).toBe(false);
    const docs = [...parseAllDocuments(readFileSync(join(dir, 'loop.yaml'), 'utf8')), ...parseAllDocuments(readFileSync(join(dir, 'function.yaml'), 'utf8'))].map((d) => d.toJS()) as Array<{ kind: string; metadata: Record<string, unknown> }>;
    expect(docs.map((d) => d.kind)).toEqual(['Loop', 'ServiceAccount', 'Role', 'RoleBinding', 'Role', 'RoleBinding', 'Deployment', 'Service']);
    expect(docs.filter((d) => 'namespace' in d.metadata)).toEqual([]);
    // The one namespace named: the chart's router, granted what it needs for this Loop here and nowhere else.
    const routerGrant = docs[5] as unknown as { subjects: unknown[]; roleRef: { name: string } };
    expect(routerGrant.subjects).toEqual([{ kind: 'ServiceAccount', namespace: 'kubeloop-system', name: 'kubeloop-router' }]);
    expect(docs[4]).toMatchObject({
      metadata: { name: routerGrant.roleRef.name },
      rules: [
        { apiGroups: [''], resources: ['serviceaccounts'], resourceNames: ['widget-labeller-loop'], verbs: ['impersonate'] },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
      ],
    });
    expect(JSON.stringify(docs.filter((d) => d !== docs[5]))).not.toContain('kubeloop-system');
    const [loop, account, role, binding] = docs as unknown as [
      { metadata: { name: string }; spec: Record<string, unknown> },
      { kind: string; metadata: { name: string } },
      { kind: string; rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> },
      { subjects: Array<Record<string, string>>; roleRef: Record<string, string> },
    ];
    expect(loop.metadata.name).toBe('widget-labeller');
    // Served by the chart's router, which runs only its release's Loops by default.
    expect(loop.metadata).toMatchObject({ labels: { 'app.kubernetes.io/instance': 'kubeloop' } });
    expect(loop.spec).toMatchObject({
      for: { apiVersion: 'apps/v1', kind: 'Deployment' },
      owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
      serviceAccount: { name: 'widget-labeller-loop' },
      // The function's Service in the Loop's own namespace (function.yaml), found by the router.
      function: { ref: { name: 'widget-labeller', port: 8080, path: '/reconcile' }, signingSecretRef: { name: 'widget-labeller-signing', key: 'secret' } },
      // Status writes (a Deployment controller's, every rollout) call the function for nothing; and the
      // function's own Deployment (function.yaml labels it) is not one it reconciles.
      ignoreStatusChanges: true,
      selector: { matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'NotIn', values: ['widget-labeller'] }] },
    });
    // The Loop's ServiceAccount ships with the rights on exactly its kinds, in its own namespace: only what a
    // namespace admin holds and so may grant (no status or finalizers of another kind).
    expect(account).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'widget-labeller-loop' } });
    expect(role.rules.map((r) => `${r.apiGroups.join()}/${r.resources.join()}`)).toEqual(['apps/deployments', '/configmaps', ',events.k8s.io/events', '/secrets']);
    // The signing Secret the Loop names: its account reads that one (the router reads it as the account), the function verifies with it.
    expect(role.rules.at(-1)).toEqual({ apiGroups: [''], resources: ['secrets'], resourceNames: ['widget-labeller-signing'], verbs: ['get', 'list', 'watch'] });
    const container = (docs[6] as unknown as { spec: { template: { spec: { containers: Array<{ env: unknown[] }> } } } }).spec.template.spec.containers[0];
    expect(container?.env).toContainEqual({ name: 'KUBELOOP_SIGNING_SECRET', valueFrom: { secretKeyRef: { name: 'widget-labeller-signing', key: 'secret' } } });
    expect(binding).toMatchObject({ roleRef: { kind: 'Role', name: 'widget-labeller-loop' }, subjects: [{ kind: 'ServiceAccount', name: 'widget-labeller-loop' }] });
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('kubectl create secret generic widget-labeller-signing -n <your-namespace> --from-literal=secret=whsec_$(openssl rand -base64 32)\nkubectl apply -n <your-namespace> -f function.yaml\nkubectl apply -n <your-namespace> -f loop.yaml');
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; engines: object; overrides?: object };
    const own = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string; engines: object; dependencies: Record<string, string>; overrides?: Record<string, unknown> };
    // From this checkout: the registry's version, unless a build (npm run build, a bench) made it a package folder.
    const built = existsSync(join(REPO, 'dist', 'lib', 'sdk', 'index.js'));
    expect(pkg.dependencies.kubeloop).toBe(built ? `file:${resolve(REPO)}` : `^${own.version}`);
    expect(pkg.engines).toEqual(own.engines);
    // npm applies overrides only at the root: kubeloop's own are carried over, $references resolved.
    const carried = rootOverrides(own.overrides, own.dependencies);
    expect(pkg.overrides).toEqual(Object.keys(carried).length > 0 ? carried : undefined);
    // The cluster test (kubeloop/testing/cluster) apart from the offline ones: npm run test:cluster.
    expect((pkg as unknown as { scripts: Record<string, string> }).scripts['test:cluster']).toBe('node --import tsx --test test/cluster/*.test.ts');
    const clusterTest = readFileSync(join(dir, 'test/cluster/loop.test.ts'), 'utf8');
    expect(clusterTest).toContain("from 'kubeloop/testing/cluster'");
    expect(clusterTest).toContain("await cluster.runFunction({ function: 'src/index.ts', loop: 'loop.yaml', namespace, asNamespaceAdmin: true });");
    // A Deployment the API server accepts: a selector and a pod template.
    expect(clusterTest).toContain("spec: { selector: { matchLabels: { app: 'example' } }, template: { metadata: { labels: { app: 'example' } }, spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] } } },");
    expect(readme).toContain('`npm run test:cluster`');
  });

  it('--cluster writes a ClusterLoop for a cluster admin: its account in kubeloop-system, a ClusterRole, the chart values', async () => {
    const project = join(root, 'cluster-labeller');
    expect((await init([project, '--for', 'apps/v1/Deployment', '--owns', 'v1/ConfigMap', '--cluster'])).code).toBe(0);
    expect(existsSync(join(project, 'function.yaml'))).toBe(false);
    const [loop, account, role, binding] = parseAllDocuments(readFileSync(join(project, 'loop.yaml'), 'utf8')).map((d) => d.toJS()) as Array<Record<string, unknown> & { spec: Record<string, unknown> }>;
    expect(loop).toMatchObject({ kind: 'ClusterLoop', spec: { serviceAccount: { namespace: 'kubeloop-system', name: 'cluster-labeller-loop' }, function: { url: 'http://cluster-labeller.kubeloop-system.svc:8080/reconcile' } } });
    expect(account).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'cluster-labeller-loop', namespace: 'kubeloop-system' } });
    expect(role).toMatchObject({ kind: 'ClusterRole' });
    expect((role as unknown as { rules: Array<{ resources: string[] }> }).rules.map((r) => r.resources.join())).toEqual(['deployments', 'deployments/status,deployments/finalizers', 'configmaps', 'events']);
    expect(binding).toMatchObject({ kind: 'ClusterRoleBinding', subjects: [{ kind: 'ServiceAccount', namespace: 'kubeloop-system', name: 'cluster-labeller-loop' }] });
    const values = parse(readFileSync(join(project, 'values.yaml'), 'utf8')) as { functions: Record<string, { image: object; loop: object }> };
    expect(values.functions['cluster-labeller']).toEqual({ image: { registry: 'ghcr.io/your-org', repository: 'cluster-labeller', tag: '0.1.0' }, loop: { for: loop?.spec.for, owns: loop?.spec.owns, ignoreStatusChanges: true } });
    expect(readFileSync(join(project, 'README.md'), 'utf8')).toContain('## Deploy (cluster admin)');
    expect(existsSync(join(project, 'test/cluster/loop.test.ts'))).toBe(false);
  });

  it('--admission writes a namespaced AdmissionHook calling the function in its namespace, skipping its pods; --cluster a ClusterAdmissionHook', async () => {
    const project = join(root, 'require-team');
    expect((await init([project, '--admission', 'validating'])).code).toBe(0);
    const [hook, account] = parseAllDocuments(readFileSync(join(project, 'admission-hook.yaml'), 'utf8')).map((d) => d.toJS()) as Array<Record<string, unknown> & { spec: Record<string, unknown>; metadata: Record<string, unknown> }>;
    expect(hook).toMatchObject({
      kind: 'AdmissionHook',
      spec: {
        function: { service: { name: 'require-team', port: 8080, path: '/admit' } },
        serviceAccount: { name: 'require-team' },
        objectSelector: { matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'NotIn', values: ['require-team'] }] },
        failurePolicy: 'Fail',
      },
    });
    expect(hook?.spec).not.toHaveProperty('namespaceSelector');
    expect(hook?.metadata).not.toHaveProperty('namespace');
    expect(account).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'require-team' } });
    // The function's pods carry the label the hook skips.
    const [deployment] = parseAllDocuments(readFileSync(join(project, 'function.yaml'), 'utf8')).map((d) => d.toJS()) as Array<{ spec: { template: { metadata: { labels: Record<string, string> } } } }>;
    expect(deployment?.spec.template.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'require-team' });
    const clusterProject = join(root, 'require-team-cluster');
    expect((await init([clusterProject, '--admission', 'validating', '--cluster'])).code).toBe(0);
    const [clusterHook] = parseAllDocuments(readFileSync(join(clusterProject, 'admission-hook.yaml'), 'utf8')).map((d) => d.toJS()) as Array<Record<string, unknown>>;
    expect(clusterHook).toMatchObject({
      kind: 'ClusterAdmissionHook',
      spec: { namespaceSelector: { matchLabels: { 'require-team-cluster.example.com/enabled': 'true' } }, function: { service: { namespace: 'kubeloop-system' } }, serviceAccount: { namespace: 'kubeloop-system', name: 'require-team-cluster' } },
    });
    expect(existsSync(join(clusterProject, 'values.yaml'))).toBe(true);
  });

  it('--admission mutating gives a namespaced hook 3 s and its ServiceAccount update and patch on the kind it changes', async () => {
    const project = join(root, 'add-label');
    expect((await init([project, '--admission', 'mutating', '--for', 'apps/v1/Deployment'])).code).toBe(0);
    const [hook, , role, binding] = parseAllDocuments(readFileSync(join(project, 'admission-hook.yaml'), 'utf8')).map((d) => d.toJS()) as Array<Record<string, unknown>>;
    expect(hook).toMatchObject({ kind: 'AdmissionHook', spec: { type: 'mutating', timeoutSeconds: 3 } });
    expect(role).toMatchObject({ kind: 'Role', metadata: { name: 'add-label-hook-writes' }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['update', 'patch'] }] });
    expect(binding).toMatchObject({ kind: 'RoleBinding', roleRef: { kind: 'Role', name: 'add-label-hook-writes' }, subjects: [{ kind: 'ServiceAccount', name: 'add-label' }] });
  });

  it('resolves $references in the overrides it carries over', () => {
    expect(rootOverrides({ '@kubernetes/client-node': { undici: '$undici' }, ws: '8.0.0' }, { undici: '^7.30.2' })).toEqual({ '@kubernetes/client-node': { undici: '^7.30.2' }, ws: '8.0.0' });
    expect(rootOverrides(undefined, {})).toEqual({});
  });

  it('writes a function that answers its own recorded fixture over HTTP', async () => {
    // As if installed: the project's imports of the package point at this checkout's sources.
    const source = readFileSync(join(dir, 'src', 'index.ts'), 'utf8').replace("from 'kubeloop'", `from ${JSON.stringify(join(REPO, 'lib', 'sdk', 'index.ts'))}`);
    writeFileSync(join(dir, 'src', 'index-local.ts'), source);
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
    const definition = ((await import(pathToFileURL(join(dir, 'src', 'index-local.ts')).href)) as { default: FunctionDefinition }).default;
    const results = await replayFixtures(definition, join(dir, 'fixtures'));
    expect(results.map((r) => r.outcome)).toEqual(['pass']);
    expect(describeFailures(results)).toBe('');
  });

  it("writes a sample object that `kubeloop render` takes with the project's multi-document loop.yaml", async () => {
    // src/index-local.ts: the module of the test above, its imports pointed at this checkout.
    const { code, output } = await captureCommand(render, [join(dir, 'deployment.yaml'), '--function', join(dir, 'src', 'index-local.ts'), '--loop', join(dir, 'loop.yaml'), '--output', 'json']);
    expect(code).toBe(0);
    const result = JSON.parse(output) as { objects: Array<{ kind: string; metadata: { labels: Record<string, string> } }>; events: Array<{ reason: string }> };
    expect(result.objects[0]).toMatchObject({ kind: 'Deployment', metadata: { labels: { 'widget-labeller.example.com/reconciled': 'true' } } });
    expect(result.events.map((e) => e.reason)).toEqual(['Reconciled']);
  });

  it('--crd writes your own kind: a structural CRD with spec and status, its type, a sample, RBAC on its plural', async () => {
    const project = join(root, 'policy-keeper');
    const { code } = await init([project, '--crd', 'example.com/v1alpha1/Policy']);
    expect(code).toBe(0);
    type Crd = { metadata: { name: string }; spec: { group: string; names: Record<string, string>; versions: Array<{ name: string; subresources: object; schema: { openAPIV3Schema: { properties: Record<string, { type: string }> } } }> } };
    const [crd, tenantRole] = parseAllDocuments(readFileSync(join(project, 'crd.yaml'), 'utf8')).map((d) => d.toJS()) as [Crd, Record<string, unknown>];
    expect(crd.metadata.name).toBe('policies.example.com');
    // The namespace admin gets the kind through admin's aggregation, so the Loop's Role can grant it.
    expect(tenantRole).toMatchObject({ kind: 'ClusterRole', metadata: { labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }, rules: [{ resources: ['policies', 'policies/status'] }] });
    expect(crd.spec.names).toMatchObject({ kind: 'Policy', plural: 'policies', singular: 'policy', listKind: 'PolicyList' });
    const [version] = crd.spec.versions;
    expect(version?.name).toBe('v1alpha1');
    expect(version?.subresources).toEqual({ status: {} });
    expect(Object.keys(version?.schema.openAPIV3Schema.properties ?? {})).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(readFileSync(join(project, 'src', 'policy.ts'), 'utf8')).toContain('export type Policy = KubeObject & { spec?: PolicySpec; status?: PolicyStatus };');
    expect(readFileSync(join(project, 'src', 'index.ts'), 'utf8')).toContain("import type { Policy } from './policy.ts';");
    expect(parse(readFileSync(join(project, 'policy.yaml'), 'utf8'))).toMatchObject({ apiVersion: 'example.com/v1alpha1', kind: 'Policy', spec: { replicas: 1 } });
    const role = parseAllDocuments(readFileSync(join(project, 'loop.yaml'), 'utf8')).map((d) => d.toJS() as { kind: string; rules?: Array<{ apiGroups: string[]; resources: string[] }> }).find((d) => d.kind === 'Role');
    expect(role?.rules?.[0]).toMatchObject({ apiGroups: ['example.com'], resources: ['policies'] });
  });

  it('--crd refuses a group without a dot, a different --for and --admission (exit 2)', async () => {
    expect((await init([join(root, 'crd-a'), '--crd', 'widgets/v1/Widget'])).output).toMatch(/a custom resource's group is a domain with a dot/);
    expect((await init([join(root, 'crd-b'), '--crd', 'example.com/v1/Widget', '--for', 'v1/ConfigMap'])).code).toBe(2);
    expect((await init([join(root, 'crd-c'), '--crd', 'example.com/v1/Widget', '--admission', 'validating'])).code).toBe(2);
  });

  it('refuses a folder that is not empty unless --force, then overwrites only its own files', async () => {
    const busy = join(root, 'busy');
    mkdirSync(busy);
    writeFileSync(join(busy, 'notes.txt'), 'mine');
    const refused = await init([busy]);
    expect(refused.code).toBe(2);
    expect(refused.output).toMatch(/busy is not empty \(notes\.txt\); choose an empty folder or pass --force/);
    expect(existsSync(join(busy, 'src', 'index.ts'))).toBe(false);
    expect((await init([busy, '--force'])).code).toBe(0);
    expect(readFileSync(join(busy, 'notes.txt'), 'utf8')).toBe('mine');
    expect(existsSync(join(busy, 'src', 'index.ts'))).toBe(true);
  });

  it('reports a bad kind or name as a usage error (exit 2) and writes nothing', async () => {
    const bad = await init([join(root, 'bad'), '--for', 'Deployment']);
    expect(bad.code).toBe(2);
    expect(bad.output).toContain('--for "Deployment"');
    expect((await init([join(root, 'Bad_Name')])).output).toMatch(/--name "Bad_Name": want a DNS label/);
    expect(existsSync(join(root, 'bad'))).toBe(false);
    expect((await init([])).code).toBe(2);
  });

  it('with --related, declares the kind in spec.related, grants only reads of it, and the function answers its fixture', async () => {
    const related = join(root, 'config-reader');
    const { code } = await init([related, '--for', 'apps/v1/Deployment', '--related', 'v1/ConfigMap']);
    expect(code).toBe(0);
    const [loop, , role] = parseAllDocuments(readFileSync(join(related, 'loop.yaml'), 'utf8')).map((d) => d.toJS()) as [
      { spec: { related?: unknown[] } },
      unknown,
      { rules: Array<{ resources: string[]; verbs: string[] }> },
    ];
    expect(loop.spec.related).toEqual([{ name: 'configmap', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: 'config-reader.example.com/configmap' } }]);
    expect(role.rules.find((r) => r.resources.includes('configmaps'))?.verbs).toEqual(['get', 'list', 'watch']);
    const source = readFileSync(join(related, 'src', 'index.ts'), 'utf8');
    expect(source).toContain("relatedOf(request, 'configmap')");
    writeFileSync(join(related, 'src', 'index-local.ts'), source.replace("from 'kubeloop'", `from ${JSON.stringify(join(REPO, 'lib', 'sdk', 'index.ts'))}`));
    writeFileSync(join(related, 'package.json'), '{ "type": "module" }\n');
    const definition = ((await import(pathToFileURL(join(related, 'src', 'index-local.ts')).href)) as { default: FunctionDefinition }).default;
    const results = await replayFixtures(definition, join(related, 'fixtures'));
    expect(describeFailures(results)).toBe('');
    expect((await init([join(root, 'bad-related'), '--admission', 'validating', '--related', 'v1/ConfigMap'])).output).toContain('--related is for reconcile functions');
  });
});
