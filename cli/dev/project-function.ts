// A user's project on `kubeloop dev`: its function run locally (a module or a command, reloaded on save), and
// its Loop and/or AdmissionHook files applied as written, by the namespace admin with --tenant. A Loop's
// spec.function.ref and a hook's function.service keep naming the function's Service: dev gives that Service a
// loopback address (service-address.ts) the router and the gateway connect it to, and keeps a LocalFunction
// condition on the Loop and hook naming the command and its log. A Loop or hook naming a URL is pointed at
// the local process instead (as dev always did for the seeds).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ADMISSION_HOOK_KIND, CLUSTER_ADMISSION_HOOK_KIND } from '../../api/admission-hook.ts';
import { CLUSTER_LOOP_KIND, LOOP_KIND } from '../../api/loop.ts';
import { isApiError, objectPath, ResourceDiscovery, type KubeClient } from '../../lib/kube/index.ts';
import { identityOf } from '../scoped-names.ts';
import { applyCrds, applyManifest, ensureNamespace, readManifests, type Manifest } from './apply-manifests.ts';
import { localFunctionCondition, withLocalFunctionCondition, type Condition } from './function-condition.ts';
import { ensureSigningSecret } from './project-signing.ts';
import { clusterLoopRefusal } from './cluster-loop-refusal.ts';
import { startServiceAddress, type LocalServiceAddress, type ServiceTarget } from './service-address.ts';
import { describeSource, startUserFunction, type FunctionSource, type UserFunction } from './user-function.ts';

export interface ProjectSpec {
  source: FunctionSource;
  /** init's loop.yaml (a Loop or ClusterLoop, its ServiceAccount and RBAC); crd.yaml beside it is installed first. */
  loop?: string;
  /** init's admission-hook.yaml (an AdmissionHook or ClusterAdmissionHook and its ServiceAccount). */
  hook?: string;
  /** Where namespaced objects without a namespace go. */
  namespace: string;
  /** A new version run as the Loop's shadow (--shadow MODULE). */
  shadow?: string;
}

export interface ProjectFunction {
  spec: ProjectSpec;
  fn: UserFunction;
  /** The router's and the gateway's --connect-services-to entries (name.namespace=IP). */
  connectEntries: string[];
  /** Identities of the Loops ("team-a/web") and hooks applied. */
  loops: string[];
  hooks: string[];
  /** One line per Service dev stands in for: "Service team-a/web:8080 -> 127.1.2.3:8080". */
  addresses: string[];
  /** Writes the LocalFunction condition where it changed (called with each status refresh). */
  reportHealth(client: KubeClient): Promise<void>;
  stop(): Promise<void>;
}

interface FunctionSpec {
  url?: string;
  ref?: { name: string; namespace?: string; port?: number; path?: string; apiVersion?: string };
  service?: { name: string; namespace?: string; port?: number; path?: string };
  shadow?: { url: string };
  signingSecretRef?: { name: string; namespace?: string; key: string };
}
type Project = Manifest & { spec: { function: FunctionSpec } };

const isLoop = (m: Manifest) => m.kind === LOOP_KIND || m.kind === CLUSTER_LOOP_KIND;
const isHook = (m: Manifest) => m.kind === ADMISSION_HOOK_KIND || m.kind === CLUSTER_ADMISSION_HOOK_KIND;
const namespacedKind = (m: Manifest) => m.kind === LOOP_KIND || m.kind === ADMISSION_HOOK_KIND;

/** The Service a Loop or hook calls, or undefined when it names a URL (or a Knative Service). */
export function serviceTarget(object: Project, namespace: string): ServiceTarget | undefined {
  const fn = object.spec.function;
  const own = object.metadata.namespace ?? namespace;
  if (fn.ref && (fn.ref.apiVersion ?? 'v1') === 'v1' && fn.ref.port !== undefined) return { name: fn.ref.name, namespace: fn.ref.namespace ?? own, port: fn.ref.port };
  if (fn.service) return { name: fn.service.name, namespace: fn.service.namespace ?? own, port: fn.service.port ?? 80 };
  return undefined;
}

/**
 * The Loop's or hook's function moved to a local base URL, keeping its path (from the url, the Service ref, or
 * a hook's "/admit"); with `shadowBase`, its shadow there too (same path). Used for the seeds as well.
 */
export function localLoop<T extends Manifest & { spec: { function: FunctionSpec } }>(object: T, base: string, shadowBase?: string): T {
  const { ref, url, service, ...rest } = object.spec.function;
  const path = url ? new URL(url).pathname : (ref?.path ?? service?.path ?? (isHook(object) ? '/admit' : '/'));
  const shadow = shadowBase === undefined ? {} : { shadow: { url: `${shadowBase}${path}` } };
  return { ...object, spec: { ...object.spec, function: { ...rest, url: `${base}${path}`, ...shadow } } };
}

async function readOne(file: string | undefined, want: (m: Manifest) => boolean, what: string, flag: string): Promise<{ object?: Project; others: Manifest[] }> {
  if (!file) return { others: [] };
  const manifests = (await readManifests(file)).map(({ manifest }) => manifest);
  const found = manifests.filter(want);
  if (found.length !== 1) throw new Error(`${flag} ${file}: want exactly one ${what}, found ${found.length}`);
  return { object: found[0] as Project, others: manifests.filter((m) => !want(m)) };
}

/**
 * The Service objects the project's function.yaml defines for these targets (applied as the user would),
 * or a bare Service with the port when there is no such file, so the router resolves spec.function.ref.
 */
async function serviceObjects(spec: ProjectSpec, targets: ServiceTarget[]): Promise<Manifest[]> {
  const folder = dirname(spec.loop ?? spec.hook ?? '.');
  const file = join(folder, 'function.yaml');
  const defined = existsSync(file) ? (await readManifests(file)).map(({ manifest }) => manifest).filter((m) => m.kind === 'Service') : [];
  return targets.map(
    (t) =>
      defined.find((m) => m.metadata.name === t.name) ?? {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: t.name, namespace: t.namespace, labels: { 'app.kubernetes.io/managed-by': 'kubeloop-dev' } },
        spec: { ports: [{ name: 'http', port: t.port, protocol: 'TCP' }] },
      },
  );
}

/**
 * Starts the project's function and applies its files: CRDs and namespaces as `admin` (the cluster admin),
 * everything else as `as` (the namespace admin with --tenant). Throws on files that do not hold what the flag says,
 * and on a ClusterLoop when the router acts as the chart's ServiceAccount (cluster-loop-refusal.ts).
 */
export async function startProjectFunction(admin: KubeClient, as: KubeClient, spec: ProjectSpec, logDir: string, say: (line: string) => void, router: { chartAccount: boolean }): Promise<ProjectFunction> {
  const adminDiscovery = new ResourceDiscovery(admin);
  const discovery = new ResourceDiscovery(as);
  const crdFile = spec.loop ? join(dirname(spec.loop), 'crd.yaml') : undefined;
  // crd.yaml is a cluster admin's: the CRD and the ClusterRole adding its kind to admin and edit.
  const crdObjects = crdFile && existsSync(crdFile) ? (await readManifests(crdFile)).map(({ manifest }) => manifest) : [];
  const crds = crdObjects.filter((m) => m.kind === 'CustomResourceDefinition');
  const loopFile = await readOne(spec.loop, isLoop, 'Loop or ClusterLoop', '--loop');
  const hookFile = await readOne(spec.hook, isHook, 'AdmissionHook or ClusterAdmissionHook', '--hook');
  if (router.chartAccount && loopFile.object?.kind === CLUSTER_LOOP_KIND) throw new Error(clusterLoopRefusal(spec.loop ?? '', loopFile.object.metadata.name));
  const inNamespace = (m: Project | undefined): Project | undefined => (m && namespacedKind(m) ? { ...m, metadata: { ...m.metadata, namespace: m.metadata.namespace ?? spec.namespace } } : m);
  const loop = inNamespace(loopFile.object);
  const hook = inNamespace(hookFile.object);
  const installed = await applyCrds(admin, adminDiscovery, crds);
  if (installed.length > 0) say(`installed ${installed.join(', ')}`);
  for (const manifest of crdObjects.filter((m) => m.kind !== 'CustomResourceDefinition')) await applyManifest(admin, adminDiscovery, manifest);
  await ensureNamespace(admin, adminDiscovery, spec.namespace);

  // One local address per Service the Loop and the hook name (often the same one).
  const targets = new Map<string, ServiceTarget>();
  for (const object of [loop, hook]) {
    const target = object && serviceTarget(object, spec.namespace);
    if (target) targets.set(`${target.name}.${target.namespace}`, target);
  }
  const addresses: LocalServiceAddress[] = [];
  for (const target of targets.values()) addresses.push(await startServiceAddress(target));
  const byUrl = { loop: loop && !serviceTarget(loop, spec.namespace), hook: hook && !serviceTarget(hook, spec.namespace) };
  const urls: { live?: string; shadow?: string } = {};
  const applyLoop = async () => {
    if (!loop || urls.live === undefined) return;
    if (byUrl.loop) return void (await applyManifest(as, discovery, localLoop(loop, urls.live, urls.shadow), spec.namespace));
    // The ref stays; a shadow is called by URL, at the same path.
    const shadow = urls.shadow === undefined ? {} : { shadow: { url: `${urls.shadow}${loop.spec.function.ref?.path ?? '/'}` } };
    await applyManifest(as, discovery, { ...loop, spec: { ...loop.spec, function: { ...loop.spec.function, ...shadow } } }, spec.namespace);
  };
  const point = async (url: string) => {
    urls.live = url;
    for (const address of addresses) address.pointAt(url);
    await applyLoop();
    if (hook && byUrl.hook) await applyManifest(as, discovery, localLoop(hook, url), spec.namespace);
  };

  for (const manifest of await serviceObjects(spec, [...targets.values()])) await applyManifest(as, discovery, manifest, spec.namespace);
  for (const manifest of [...loopFile.others, ...hookFile.others]) {
    if (manifest.kind === 'CustomResourceDefinition') continue;
    if (manifest.metadata.namespace) await ensureNamespace(admin, adminDiscovery, manifest.metadata.namespace);
    await applyManifest(as, discovery, manifest, spec.namespace);
  }
  if (hook && !byUrl.hook) await applyManifest(as, discovery, hook, spec.namespace);
  // Processes are named after what calls them: function-<Loop or hook>-<generation>.
  const name = loop?.metadata.name ?? hook?.metadata.name ?? 'dev';
  // A signed Loop: its Secret made when missing (before the Loop, which the router starts by reading it), its key for the function.
  const signingRef = loop?.spec.function.signingSecretRef;
  const signing = signingRef && (await ensureSigningSecret(as, { ...signingRef, namespace: signingRef.namespace ?? loop?.metadata.namespace ?? spec.namespace }, say));
  const fn = await startUserFunction({ source: spec.source, logDir, say, name, pointLoopAt: point, ...(signing ? { env: { KUBELOOP_SIGNING_SECRET: signing } } : {}) });
  // A function that did not start: the Loop and hook are applied all the same, and their condition says why.
  if (!fn.current()) {
    urls.live = 'http://127.0.0.1:1';
    await applyLoop();
    if (hook && byUrl.hook) await applyManifest(as, discovery, localLoop(hook, urls.live), spec.namespace);
  }
  let shadow: UserFunction | undefined;
  if (spec.shadow && loop) {
    shadow = await startUserFunction({
      source: { module: spec.shadow },
      logDir,
      say,
      name: `${name}-shadow`,
      pointLoopAt: async (url) => {
        urls.shadow = url;
        await applyLoop();
      },
    });
    say(`${spec.shadow} runs as the shadow of Loop ${loop.metadata.name}: its answers are compared, never applied (condition ShadowDiverged)`);
  }

  const identity = (m: Project) => identityOf({ name: m.metadata.name, namespace: namespacedKind(m) ? m.metadata.namespace : undefined });
  const where = addresses.length > 0 ? addresses.map((a) => `Service ${a.service.namespace}/${a.service.name}:${a.service.port} (${a.host}:${a.service.port})`).join(', ') : 'the URL dev set';
  return {
    spec,
    fn,
    connectEntries: addresses.map((a) => a.entry),
    loops: loop ? [identity(loop)] : [],
    hooks: hook ? [identity(hook)] : [],
    addresses: addresses.map((a) => `Service ${a.service.namespace}/${a.service.name}:${a.service.port} -> ${a.host}:${a.service.port}`),
    async reportHealth(client) {
      const problem = fn.problem();
      const condition = localFunctionCondition({ source: describeSource(spec.source), log: fn.logPath(), address: where, ...(problem ? { problem } : {}) }, new Date());
      for (const object of [loop, hook]) if (object) await writeCondition(client, new ResourceDiscovery(client), object, condition);
    },
    async stop() {
      await shadow?.stop();
      await fn.stop();
      for (const address of addresses) await address.close();
    },
  };
}

/** Sets the condition on the object's status when it changed; a conflict or a missing object waits for the next refresh. */
async function writeCondition(client: KubeClient, discovery: ResourceDiscovery, object: Project, condition: Condition): Promise<void> {
  const resource = await discovery.resolve(object.apiVersion, object.kind);
  const path = objectPath(resource, object.metadata.name, resource.namespaced ? object.metadata.namespace : undefined);
  try {
    const live = await client.request<{ metadata: { resourceVersion?: string }; status?: { conditions?: Condition[] } }>({ path });
    const next = withLocalFunctionCondition(live.status?.conditions ?? [], condition);
    if (!next) return;
    await client.request({ method: 'PATCH', path: `${path}/status`, contentType: 'application/merge-patch+json', body: { metadata: { resourceVersion: live.metadata.resourceVersion }, status: { conditions: next } } });
  } catch (error) {
    if (!isApiError(error, 404) && !isApiError(error, 409)) throw error;
  }
}
