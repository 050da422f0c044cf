// docs/tenants.md's walkthrough on the real control plane: a user who holds nothing but the built-in admin role
// in a fresh namespace runs `kubeloop init` for a controller and for a validating webhook, and applies what it
// wrote (function.yaml, loop.yaml, admission-hook.yaml) with their own identity (impersonation); the Loop
// reconciles a Deployment and the hook denies and admits Pods. What the page does with an image here runs
// in-process: each generated function is served over HTTP on a free port, the Service and the Loop's ref name
// that port (the router connects Service hosts to 127.0.0.1), and the hook calls it by URL (the gateway's dev mode).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { AdmissionHook } from '../../api/admission-hook.ts';
import type { Loop } from '../../api/loop.ts';
import { run as diff } from '../../cli/commands/diff.ts';
import { run as init } from '../../cli/commands/init.ts';
import { applyManifest, type Manifest } from '../../cli/dev/apply-manifests.ts';
import { isApiError, ResourceDiscovery, type KubeClient } from '../../lib/kube/index.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { generateSigningSecret } from '../../lib/signing/webhook-signature.ts';
import type { AdmissionDefinition } from '../../lib/sdk/define-admission.ts';
import type { FunctionDefinition } from '../../lib/sdk/define-function.ts';
import { eventually } from '../cluster/eventually.ts';
import { captureCommand } from '../http/capture-console.ts';
import { byKind, renderChart } from './chart-render.ts';
import { namespaceAdmin } from './tenant-admin.ts';
import { certificateKubeConfig, installTenantRoles } from './tenant-kit.ts';
import { installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { deleteNamespace, HOOK_SUITE_LABEL, startWebhookFor, type WebhookUnderTest } from './webhook-harness.ts';

const SDK = fileURLToPath(new URL('../../lib/sdk/index.ts', import.meta.url));
const API = '/apis/kubeloop.dev/v1alpha1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
/** The user the chart's router is: its ServiceAccount kubeloop-system/kubeloop-router, the subject loop.yaml binds. */
const ROUTER_USER = 'system:serviceaccount:kubeloop-system:kubeloop-router';
const routerBinding = () => `kubeloop-router-${ns}`;

let h: RouterHarness;
let ns: string;
let work: string;
let alice: KubeClient;
let webhook: WebhookUnderTest | undefined;
const served: ServedFunction[] = [];
const tenantRoles: string[] = [];

/** `kubeloop init <name> ...args` in the work folder, as the page runs it. */
async function initProject(name: string, args: string[]): Promise<string> {
  const dir = join(work, name);
  const { code, output } = await captureCommand(init, [dir, ...args]);
  if (code !== 0) throw new Error(`kubeloop init ${name} failed: ${output}`);
  return dir;
}

/** The project's src/index.ts served over HTTP, its import of the package pointed at this checkout (as `npm install` would). */
async function serveProject(dir: string, signingSecret?: string): Promise<ServedFunction> {
  const source = await readFile(join(dir, 'src', 'index.ts'), 'utf8');
  await writeFile(join(dir, 'src', 'index-local.ts'), source.replace("from 'kubeloop'", `from ${JSON.stringify(SDK)}`));
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
  const definition = ((await import(pathToFileURL(join(dir, 'src', 'index-local.ts')).href)) as { default: FunctionDefinition | AdmissionDefinition }).default;
  const fn = await serveFunction(definition, { port: 0, host: '127.0.0.1', logLevel: 'warn', ...(signingSecret ? { signingSecret } : {}) });
  served.push(fn);
  return fn;
}

async function documents(dir: string, file: string): Promise<Manifest[]> {
  return parseAllDocuments(await readFile(join(dir, file), 'utf8')).map((d) => d.toJS() as Manifest);
}

/** `kubectl apply -n <ns> -f <file>` as alice: server-side apply of each document with her identity. */
async function applyAsAlice(manifests: Manifest[]): Promise<void> {
  const discovery = new ResourceDiscovery(alice);
  for (const manifest of manifests) await applyManifest(alice, discovery, manifest, ns);
}

async function readyOf(path: string): Promise<string | undefined> {
  const object = await h.client.request<Loop | AdmissionHook>({ path });
  const ready = object.status?.conditions?.find((c) => c.type === 'Ready');
  return ready && `${ready.status} ${ready.reason ?? ''}: ${ready.message ?? ''}`;
}

beforeAll(async () => {
  h = await routerHarness('tenant-walkthrough');
  ns = h.suite.namespace;
  work = await mkdtemp(join(tmpdir(), 'kubeloop-tenant-walkthrough-'));
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml', 'loops.kubeloop.dev.yaml', 'clusteradmissionhooks.kubeloop.dev.yaml', 'admissionhooks.kubeloop.dev.yaml']);
  // What the cluster admin installed: the chart's aggregated roles that give a namespace's admin the kubeloop
  // kinds, named after this suite (other suites install the chart on the same control plane).
  const { manifests } = await renderChart(h.suite.binaries.helm, { namespace: ns });
  tenantRoles.push(...(await installTenantRoles(h.client, manifests, ns)));
  expect(tenantRoles).toHaveLength(3);
  // Alice: nothing but admin in this namespace.
  alice = await namespaceAdmin(h.client, ns, `alice-${ns}`);
  // The router as the chart runs it: its ServiceAccount's name (a client certificate here) with exactly the
  // chart's router ClusterRole, so that what it may do in this namespace is what loop.yaml grants it.
  const routerRole = byKind(manifests, 'ClusterRole').find((m) => m.metadata.name.endsWith('-router-loops')) as unknown as { rules: unknown[] };
  await h.client.request({ method: 'POST', path: `${RBAC}/clusterroles`, body: { metadata: { name: routerBinding() }, rules: routerRole.rules } });
  await h.client.request({
    method: 'POST',
    path: `${RBAC}/clusterrolebindings`,
    body: { metadata: { name: routerBinding() }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: routerBinding() }, subjects: [{ kind: 'User', name: ROUTER_USER, apiGroup: 'rbac.authorization.k8s.io' }] },
  });
  const routerKubeConfig = await certificateKubeConfig(h.suite.server, ROUTER_USER);
  await h.router(undefined, { kubeConfig: routerKubeConfig, loopSelector: h.loopSelector, connectServicesTo: '127.0.0.1' });
}, 300_000);

afterAll(async () => {
  if (webhook) {
    await webhook.webhook.stop({ unregister: true });
    await deleteNamespace(h.suite, webhook.certNamespace);
  }
  for (const fn of served) await fn.close().catch(() => {});
  await h?.client.request({ method: 'DELETE', path: `${API}/namespaces/${ns}/admissionhooks` }).catch(() => {});
  await h?.client.request({ method: 'DELETE', path: `${API}/namespaces/${ns}/loops` }).catch(() => {});
  for (const kind of ['clusterrolebindings', 'clusterroles']) await h?.client.request({ method: 'DELETE', path: `${RBAC}/${kind}/${routerBinding()}` }).catch(() => {});
  for (const name of tenantRoles) await h?.client.request({ method: 'DELETE', path: `${RBAC}/clusterroles/${name}` }).catch(() => {});
  await h?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('docs/tenants.md, as a user with nothing but admin in a fresh namespace', () => {
  it('may create Loops and AdmissionHooks there, and no ClusterLoop', async () => {
    const review = async (resource: string, namespace?: string) => {
      const body = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { group: 'kubeloop.dev', resource, verb: 'create', ...(namespace ? { namespace } : {}) } } };
      return (await alice.request<{ status: { allowed: boolean } }>({ method: 'POST', path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', body })).status.allowed;
    };
    expect(await review('loops', ns)).toBe(true);
    expect(await review('admissionhooks', ns)).toBe(true);
    expect(await review('clusterloops')).toBe(false);
  });

  it('ships the controller: init, function.yaml and loop.yaml applied as written, and the Loop reconciles a Deployment', async () => {
    const project = await initProject('my-controller', ['--for', 'apps/v1/Deployment', '--owns', 'v1/Service']);
    // The page's `kubectl create secret generic my-controller-signing ...`, as alice; the function gets the key as function.yaml gives it.
    const signingSecret = generateSigningSecret();
    await alice.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/secrets`, body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'my-controller-signing' }, stringData: { secret: signingSecret } } });
    const fn = await serveProject(project, signingSecret);
    const port = Number(new URL(fn.url).port);
    // The one edit: where the function listens here, instead of the image's 8080.
    const workload = (await documents(project, 'function.yaml')).map((m) => (m.kind === 'Service' ? { ...m, spec: { ...(m.spec as object), ports: [{ name: 'http', port, protocol: 'TCP' }] } } : m));
    await applyAsAlice(workload);
    const loopFile = (await documents(project, 'loop.yaml')).map((m) => {
      if (m.kind !== 'Loop') return m;
      const spec = m.spec as Loop['spec'] & { function: { ref: { port: number } } };
      return { ...m, metadata: { ...m.metadata, labels: h.loopSelector.matchLabels }, spec: { ...spec, function: { ...spec.function, ref: { ...spec.function.ref, port } } } };
    });
    // The Loop, its ServiceAccount with a Role, and the router's grant in this namespace.
    expect(loopFile.map((m) => m.kind)).toEqual(['Loop', 'ServiceAccount', 'Role', 'RoleBinding', 'Role', 'RoleBinding']);
    await applyAsAlice(loopFile);
    const loopPath = `${API}/namespaces/${ns}/loops/my-controller`;
    await eventually('Loop my-controller Ready=True', async () => (await readyOf(loopPath))?.startsWith('True'), 60_000);
    const labels = { app: 'web' };
    await alice.request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${ns}/deployments`,
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } } },
    });
    await eventually('Deployment web labelled by my-controller', async () => {
      const live = await alice.request<{ metadata: { labels?: Record<string, string> } }>({ path: `/apis/apps/v1/namespaces/${ns}/deployments/web` });
      return live.metadata.labels?.['my-controller.example.com/reconciled'] === 'true';
    });
  });

  it('previews the same version with `kubeloop diff --loop my-controller -n NS`: read as the Loop in its namespace, no change (exit 0)', async () => {
    const project = join(work, 'my-controller');
    const running = served[0]?.url ?? '';
    const { code, output } = await captureCommand(diff, ['--loop', 'my-controller', '-n', ns, '--function', join(project, 'src', 'index-local.ts'), '--baseline', running, '--kubeconfig', h.suite.kubeconfigPath, '-o', 'json']);
    expect(code, output).toBe(0);
    // web only: the function's own Deployment (function.yaml) is outside the Loop's selector, and nothing elsewhere.
    expect(JSON.parse(output)).toMatchObject({ loop: `${ns}/my-controller`, summary: { objects: 1, unchanged: 1 } });
    // Without -n there is no guessing which team's Loop is meant.
    expect((await captureCommand(diff, ['--loop', 'my-controller', '--function', running])).code).toBe(2);
  });

  it('ships the webhook: admission-hook.yaml applied as written, and the hook denies a Pod without a team label and admits one with it', async () => {
    const project = await initProject('require-team', ['--admission', 'validating']);
    const fn = await serveProject(project);
    webhook = await startWebhookFor(h.suite);
    const hookFile = (await documents(project, 'admission-hook.yaml')).map((m) => {
      if (m.kind !== 'AdmissionHook') return m;
      // The gateway reaches the in-process function by URL (dev mode), as it would reach the Service.
      const { service: _service, ...fnSpec } = (m.spec as AdmissionHook['spec'] & object).function;
      return { ...m, metadata: { ...m.metadata, labels: { [HOOK_SUITE_LABEL]: ns } }, spec: { ...(m.spec as object), function: { ...fnSpec, url: `${fn.url}/admit` } } };
    });
    expect(hookFile.map((m) => m.kind)).toEqual(['AdmissionHook', 'ServiceAccount']);
    await applyAsAlice(hookFile);
    const hookPath = `${API}/namespaces/${ns}/admissionhooks/require-team`;
    await eventually('AdmissionHook require-team Ready=True', async () => (await readyOf(hookPath))?.startsWith('True'), 60_000);
    const pod = (name: string, labels: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    // The webhook configuration takes a moment to reach the API server's admission chain: retry until denied.
    const denial = await eventually('a Pod without a team label denied', async () => {
      try {
        await alice.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/pods`, body: pod('no-label', {}), query: { dryRun: 'All' } });
        return false;
      } catch (error) {
        return isApiError(error) && error.message;
      }
    }, 60_000);
    expect(denial).toContain('Pod "no-label" needs a "team" label');
    await alice.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/pods`, body: pod('labelled', { team: 'a' }) });
  });

  it("applies the page's sample team namespace, samples/tenants/team-a.yaml, with nothing but admin (no grant it may not make)", async () => {
    const sample = parseAllDocuments(await readFile(fileURLToPath(new URL('../../samples/tenants/team-a.yaml', import.meta.url)), 'utf8')).map((d) => d.toJS() as Manifest);
    // Unlabelled, its Loop and hook are not this suite's router's or gateway's to run: this is about who may apply it.
    await applyAsAlice(sample);
    for (const kind of ['loops', 'admissionhooks']) {
      const list = await alice.request<{ items: unknown[] }>({ path: `${API}/namespaces/${ns}/${kind}` });
      expect(list.items.length).toBe(2);
    }
  });
});
