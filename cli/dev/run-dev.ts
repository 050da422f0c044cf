// `kubeloop dev`: the whole platform on a local control plane (or an existing cluster): CRDs, the functions,
// their Loops pointed at 127.0.0.1, the router, the webhook gateway in dev mode with the sample
// AdmissionHooks (the Watcher sidecar injector), the samples; then a live status
// until the signal aborts, and a clean stop of everything it started.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBinaries, startControlPlane, type ControlPlane } from '../cluster/index.ts';
import { gatewayClientAuthArgs } from '../cluster/webhook-client-auth.ts';
import { KubeClient, loadKubeConfig, ResourceDiscovery } from '../../lib/kube/index.ts';
import { admissionRegistry, functionRegistry } from '../../functions/registry.ts';
import { packageRoot } from '../package-root.ts';
import { DEFAULT_HOOK_CONFIGURATION_NAME } from '../../webhooks/lifecycle/hook-configuration.ts';
import { chartCrdFiles } from '../chart-crds.ts';
import { applyCrds, applyManifest, deleteIfPresent, ensureNamespace, readManifests, type Manifest } from './apply-manifests.ts';
import { loopRows, readLoopReadiness, readRouterMetrics, statusPrinter } from './live-status.ts';
import { startLocalProcess, stopLocalProcesses, type LocalProcess } from './local-processes.ts';
import type { MetricSample } from './prometheus-text.ts';
import { progressReporter } from './progress.ts';
import { localLoop, startProjectFunction, type ProjectFunction, type ProjectSpec } from './project-function.ts';
import { describeSource } from './user-function.ts';
import { startServiceAddress, type LocalServiceAddress } from './service-address.ts';
import { chartAccountKubeconfigs, installChartPlatform } from './chart-platform.ts';
import { createTenantUser, type TenantUser } from './tenant-user.ts';
import { tryCommands } from './try-commands.ts';
import { applySampleAdmissionHooks, sampleAdmissionHookNames, waitForHooksReady } from './sample-admission-hooks.ts';
import { signingManifests, type SignedLoop } from './dev-signing.ts';
import { namespacedSampleLoop } from './namespaced-sample.ts';
import { generateSigningSecret } from '../../lib/signing/webhook-signature.ts';
import { startDevTracing, tracingLines, type DevTracing } from './dev-tracing.ts';
import { prepareDevHistoryApi, registerDevHistoryApi } from './dev-history-api.ts';
import { devConsoleLine, startDevConsole } from '../console/dev-console.ts';
import type { OpenConsole } from '../console/open-console.ts';
import { identityOf, scopedPath, type ScopedName } from '../scoped-names.ts';

export interface DevOptions {
  /** Run against this cluster instead of starting a local control plane. */
  kubeconfig?: string;
  /** Logs of the local processes go to <dir>/logs. */
  dir: string;
  /** kubeloop's namespace in dev mode (the webhook's certificate Secret lives there). */
  namespace: string;
  webhook: boolean;
  samples: boolean;
  /** Run Jaeger and export the router's, webhook's, functions' and kube-apiserver's spans to it. */
  tracing?: boolean;
  /** Start the seed functions and their Loops (false: only the user's function). */
  seeds: boolean;
  /** Users' projects: each function served locally and reloaded on change, its Loop and/or hook applied (project-function.ts). */
  projects?: ProjectSpec[];
  /** Make this namespace and a kubeconfig bound only to `admin` there; the project's files are applied as that user. */
  tenant?: string;
  statusIntervalMs: number;
  out: { write(text: string): boolean; isTTY?: boolean; columns?: number };
}

const REPO = packageRoot();
/** The port the chart's function Services listen on (functionDefaults.port). */
const FUNCTION_SERVICE_PORT = 8080;

type LoopManifest = Parameters<typeof localLoop>[0];

/**
 * The Loops of samples/loops pointed at local function URLs (by Loop name; a Loop without one is skipped),
 * each after its ServiceAccount and RBAC so the router finds them when it reviews the Loop's access.
 * With signingKey, a Loop whose function has a key is signed: its Secret and the Role reading it first (dev-signing.ts).
 * With namespaced, the named Loops run as namespaced Loops of that namespace (namespaced-sample.ts).
 * Returns the identities of the Loops applied. Also used by the soak (test/soak).
 */
export async function applySampleLoops(
  client: KubeClient,
  discovery: ResourceDiscovery,
  functionUrl: (loop: string) => string | undefined,
  say: (line: string) => void,
  signingKey: (loop: string) => string | undefined = () => undefined,
  namespaced?: { namespace: string; loops: ReadonlySet<string> },
): Promise<string[]> {
  const loopManifests = await readManifests(join(REPO, 'samples', 'loops'));
  const clusterRoleRules = (name: string) => (loopManifests.find(({ manifest: m }) => m.kind === 'ClusterRole' && m.metadata.name === name)?.manifest.rules as unknown[] | undefined) ?? [];
  for (const { manifest } of loopManifests.filter(({ manifest }) => manifest.kind !== 'ClusterLoop')) {
    if (manifest.metadata.namespace) await ensureNamespace(client, discovery, manifest.metadata.namespace);
    await applyManifest(client, discovery, manifest);
  }
  const applied: string[] = [];
  for (const { file, manifest } of loopManifests.filter(({ manifest }) => manifest.kind === 'ClusterLoop')) {
    const url = functionUrl(manifest.metadata.name);
    if (!url) {
      say(`skipping Loop ${manifest.metadata.name} (${file}): no registered function of that name`);
      continue;
    }
    let loop: Manifest = localLoop(manifest as LoopManifest, url);
    if (namespaced?.loops.has(manifest.metadata.name)) {
      // A tenant's Loop instead: in that namespace, as a ServiceAccount of it with the ClusterRole's rules as a Role.
      const account = (manifest.spec as { serviceAccount?: { name: string } } | undefined)?.serviceAccount?.name ?? '';
      const objects = namespacedSampleLoop(loop as LoopManifest, clusterRoleRules(account), namespaced.namespace);
      await ensureNamespace(client, discovery, namespaced.namespace);
      for (const object of objects.slice(0, -1)) await applyManifest(client, discovery, object);
      loop = objects.at(-1) ?? loop;
    }
    const key = signingKey(manifest.metadata.name);
    if (key) {
      const signed = signingManifests(loop as SignedLoop, key);
      for (const object of signed.objects) await applyManifest(client, discovery, object);
      loop = signed.loop;
    }
    await applyManifest(client, discovery, loop);
    applied.push(identityOf({ name: manifest.metadata.name, namespace: loop.metadata.namespace }));
  }
  return applied;
}

type Say = (line?: string) => void;

const logDirOf = (options: DevOptions): string => join(options.dir, 'logs');

function sayTo(out: DevOptions['out']): Say {
  return (line = '') => void out.write(`${line}\n`);
}

/** What `kubeloop dev` started so far, so that stopDev stops exactly that. */
interface DevSession {
  started: LocalProcess[];
  appliedLoops: string[];
  appliedHooks: string[];
  plane?: ControlPlane;
  tracing?: DevTracing;
  client?: KubeClient;
  webhookRegistered: boolean;
  /** The router's history API port, once registered and Available (`kubeloop history` works). */
  historyApi?: number;
  projects: ProjectFunction[];
  /** Loopback addresses standing in for the seed hooks' Services (service-address.ts). */
  addresses: LocalServiceAddress[];
  /** The namespace admin's kubeconfig (--tenant). */
  tenant?: TenantUser;
  console?: OpenConsole;
}

/** A Loop's or hook's identity as dev records it ("team-a/web" or "web") back to the object. */
function scopedNamed(kind: ScopedName['kind'], identity: string): ScopedName {
  const [namespace, name] = identity.includes('/') ? identity.split('/') : [undefined, identity];
  return { kind, name: name ?? identity, ...(namespace ? { namespace } : {}) };
}

async function stopDev(session: DevSession, say: Say): Promise<void> {
  const { client, plane } = session;
  say('stopping: router, webhook and functions, then the control plane ...');
  await stopLocalProcesses(session.started);
  await session.console?.close();
  for (const project of session.projects) await project.stop();
  for (const address of session.addresses) await address.close();
  if (client && !plane) {
    // On an existing cluster, leave nothing pointing at the ports that just closed.
    for (const name of session.appliedHooks) await deleteIfPresent(client, `/apis/kubeloop.dev/v1alpha1/clusteradmissionhooks/${name}`).catch(() => {});
    if (session.webhookRegistered) {
      for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
        await deleteIfPresent(client, `/apis/admissionregistration.k8s.io/v1/${kind}/${DEFAULT_HOOK_CONFIGURATION_NAME}`).catch(() => {});
      }
    }
    for (const loop of session.appliedLoops) await deleteIfPresent(client, scopedPath(scopedNamed('loop', loop))).catch(() => {});
    for (const hook of session.projects.flatMap((p) => p.hooks)) await deleteIfPresent(client, scopedPath(scopedNamed('hook', hook))).catch(() => {});
  }
  await client?.close();
  await session.tenant?.client.close();
  await plane?.stop();
  await session.tracing?.stop();
  say('stopped cleanly');
}

/** The given cluster's kubeconfig, or a local control plane started (and recorded in the session) for it. */
async function startCluster(options: DevOptions, session: DevSession): Promise<string> {
  if (options.kubeconfig) return options.kubeconfig;
  const progress = progressReporter(options.out, 'control plane');
  let plane: ControlPlane;
  try {
    await ensureBinaries({ onProgress: (line) => progress.update(line) });
    const apiserverTracing = session.tracing?.apiserver;
    plane = session.plane = await startControlPlane({ onProgress: (line) => progress.update(line), ...(apiserverTracing ? { apiserverTracing } : {}) });
  } catch (error) {
    progress.done('control plane failed to start');
    throw error;
  }
  progress.done(`control plane ready: ${plane.server} (state in ${plane.dir})`);
  return plane.kubeconfigPath;
}

/**
 * The chart's CRDs and, on dev's own control plane, what a default `helm install` adds besides its workloads
 * (RBAC, admission policies, the history reader binding: chart-platform.ts). An existing cluster keeps its own.
 */
async function installChart(options: DevOptions, session: DevSession, client: KubeClient, discovery: ResourceDiscovery, say: Say): Promise<void> {
  const crds = await applyCrds(client, discovery, (await Promise.all(chartCrdFiles(REPO).map((file) => readManifests(file)))).flat().map(({ manifest }) => manifest));
  say(`installed ${crds.length} CRDs: ${crds.join(', ')}`);
  if (!session.plane) return;
  const summary = await installChartPlatform(client, discovery, session.plane.binaries.helm, { namespace: options.namespace, seeds: options.seeds, webhook: options.webhook });
  say(`installed from the chart (helm template, as helm install would): ${summary}`);
}

/** The seed functions, the user's function, their Loops, the router and the webhook; stops early on abort. */
async function startPlatform(options: DevOptions, session: DevSession, client: KubeClient, discovery: ResourceDiscovery, kubeconfigPath: string, signal: AbortSignal): Promise<void> {
  const { started, appliedLoops } = session;
  const say = sayTo(options.out);
  const logDir = logDirOf(options);
  const seedNames = options.seeds ? Object.keys(functionRegistry).sort() : [];
  // Loopback is allowed in dev, except the local control plane's own ports (etcd above all).
  const controlPlanePorts = (session.plane?.ports ?? []).map((port) => `--deny-loopback-port=${port}`);
  // The admission functions the sample AdmissionHooks call (the Watcher sidecar injector), with the webhook.
  const admissionNames = options.seeds && options.webhook ? (await sampleAdmissionHookNames()).filter((name) => name in admissionRegistry) : [];
  say(`starting ${seedNames.length + admissionNames.length + (options.projects?.length ?? 0)} functions, the router${options.webhook ? ' and the webhook' : ''} (logs in ${logDir}) ...`);
  // On its own control plane the router and the gateway act as the chart's ServiceAccounts, with its RBAC only.
  const accounts = session.plane ? await chartAccountKubeconfigs(session.plane, options.dir, options.namespace) : { router: kubeconfigPath, webhook: kubeconfigPath };
  const functions = new Map<string, LocalProcess>();
  // Signed calls as the chart sets them up: a fresh key per function, in its environment and the Loop's Secret.
  const keys = new Map(seedNames.map((name) => [name, generateSigningSecret()]));
  for (const name of seedNames) {
    if (signal.aborted) break;
    const fn = await startLocalProcess({ name: `function-${name}`, args: ['function', name], logDir, env: { KUBELOOP_SIGNING_SECRET: keys.get(name) } });
    started.push(fn);
    functions.set(name, fn);
  }

  const admissionFunctions = new Map<string, LocalProcess>();
  for (const name of admissionNames) {
    if (signal.aborted) break;
    const fn = await startLocalProcess({ name: `function-${name}`, args: ['function', name], logDir });
    started.push(fn);
    admissionFunctions.set(name, fn);
  }

  if (options.seeds) appliedLoops.push(...(await applySampleLoops(client, discovery, (name) => functions.get(name)?.url, say, (name) => keys.get(name))));

  if (options.tenant && session.plane) {
    session.tenant = await createTenantUser(client, discovery, session.plane, options.dir, options.tenant);
    say(`namespace ${options.tenant}: user ${session.tenant.user} holds only admin there (kubeconfig ${session.tenant.kubeconfig})`);
  }
  for (const spec of options.projects ?? []) {
    if (signal.aborted) break;
    const project = await startProjectFunction(client, session.tenant?.client ?? client, spec, logDir, say);
    session.projects.push(project);
    appliedLoops.push(...project.loops);
  }
  // The sample hooks call their functions by Service, as the chart's do (its hook policy refuses loopback URLs):
  // each Service gets a loopback address leading to the local process.
  for (const [name, fn] of admissionFunctions) {
    const address = await startServiceAddress({ name: `kubeloop-${name}`, namespace: options.namespace, port: FUNCTION_SERVICE_PORT });
    address.pointAt(fn.url);
    session.addresses.push(address);
  }
  // The projects' Services lead to their local functions; every other Service host resolves as usual.
  const entries = [...session.addresses.map((a) => a.entry), ...session.projects.flatMap((p) => p.connectEntries)];
  const connect = entries.length > 0 ? [`--connect-services-to=${entries.join(',')}`] : [];

  if (!signal.aborted) {
    // On its own control plane (front-proxy CA, aggregation layer) the router serves the history API too.
    const historyApi = session.plane ? await prepareDevHistoryApi(options.dir, options.namespace) : undefined;
    // Dev mode: the functions listen on 127.0.0.1, which the router refuses outside it.
    started.push(await startLocalProcess({ name: 'router', args: ['router', `--kubeconfig=${accounts.router}`, '--allow-loopback-functions', ...connect, ...controlPlanePorts, ...(historyApi?.routerArgs ?? [])], logDir }));
    if (historyApi) {
      const problem = await registerDevHistoryApi(client, discovery, historyApi, options.namespace, signal);
      if (problem) say(`note: kubeloop history is unavailable: ${problem}`);
      else session.historyApi = historyApi.port;
    }
  }
  if (options.webhook && !signal.aborted) {
    started.push(
      await startLocalProcess({
        name: 'webhook',
        // On its own control plane, only that API server (its webhook client certificate) may call the gateway.
        args: ['webhook', '--dev', `--kubeconfig=${accounts.webhook}`, `--namespace=${options.namespace}`, ...(session.plane ? gatewayClientAuthArgs(session.plane.dir) : []), ...connect, ...controlPlanePorts],
        scheme: 'https',
        opsPort: true,
        logDir,
      }),
    );
    session.webhookRegistered = true;
    const serviceOf = (hook: string) => session.addresses.find((a) => a.service.name === `kubeloop-${hook}`)?.service;
    session.appliedHooks.push(...(await applySampleAdmissionHooks(client, discovery, (name) => admissionFunctions.get(name)?.url, say, serviceOf)));
    await waitForHooksReady(client, session.appliedHooks, say, signal);
  }
}

function printRunning(options: DevOptions, session: DevSession, samples: Array<{ manifest: Manifest }>, kubeconfigPath: string): void {
  const say = sayTo(options.out);
  const { started, projects } = session;
  const userProcesses = projects.flatMap((p) => p.fn.current() ?? []);
  say('');
  say('kubeloop dev is running');
  for (const p of [...started, ...userProcesses]) say(`  ${p.name.padEnd(24)} ${p.url}  pid ${p.process.pid ?? '?'}  log ${p.process.logPath}`);
  for (const project of projects) {
    const what = describeSource(project.spec.source);
    if (!project.fn.current()) say(`  ${what} is not running (${project.fn.problem() ?? ''}); log ${project.fn.logPath()}`);
    say(`  ${what}: reloaded when a file in its folder changes (the cluster and the router keep running)`);
    for (const line of project.addresses) say(`  ${line} (the router and the webhook call it there)`);
  }
  const hooks = projects.flatMap((p) => p.hooks);
  if (hooks.length > 0) say(`  your AdmissionHooks: ${hooks.join(', ')}`);
  say(`  Loops (function URLs on 127.0.0.1): ${session.appliedLoops.join(', ') || '(none)'}`);
  if (session.console) say(devConsoleLine(session.console));
  if (session.tracing) for (const line of tracingLines(session.tracing, !options.kubeconfig)) say(line);
  if (session.historyApi) say(`  history API (kubeloop history)  https://127.0.0.1:${session.historyApi}, registered as APIService v1alpha1.history.kubeloop.dev`);
  if (session.appliedHooks.length > 0) say(`  AdmissionHooks (function URLs on 127.0.0.1): ${session.appliedHooks.join(', ')}`);
  if (samples.length > 0) say(`  samples applied: ${samples.map(({ manifest }) => `${manifest.kind}/${manifest.metadata.name}`).join(', ')}`);
  if (options.webhook && options.kubeconfig) say('  note: the webhook is registered at https://127.0.0.1; only an API server on this machine can call it');
  say('');
  say(`kubeconfig: ${kubeconfigPath}`);
  // kubectl supports one minor version either side of the server; the machine's may be years older.
  if (session.plane) say(`kubectl: ${session.plane.binaries.kubectl}  (built with this API server; a kubectl more than one minor version apart is unsupported)`);
  if (session.tenant) say(`tenant kubeconfig: ${session.tenant.kubeconfig}  (${session.tenant.user}: only admin in namespace ${session.tenant.namespace}; export KUBECONFIG=it to act as the namespace admin)`);
  say('');
  say('Try:');
  for (const line of tryCommands(kubeconfigPath, samples.map(({ manifest }) => manifest), new Date(), session.historyApi !== undefined && session.appliedLoops.includes('podset'))) say(line);
  say('');
}

/** Prints the Loops' status until the signal aborts (0) or a local process dies (1). */
async function showStatusUntilAborted(options: DevOptions, started: LocalProcess[], client: KubeClient, signal: AbortSignal, projects: ProjectFunction[]): Promise<number> {
  const say = sayTo(options.out);
  const router = started.find((p) => p.name === 'router');
  const printer = statusPrinter(options.out);
  let before: MetricSample[] = [];
  let statusError = '';
  while (!signal.aborted) {
    const dead = started.find((p) => !p.process.running);
    if (dead) {
      say(`${dead.name} exited unexpectedly; its log ${dead.process.logPath} ends with:\n${dead.process.logTail(20)}`);
      return 1;
    }
    try {
      for (const project of projects) await project.reportHealth(client);
      const now = router ? await readRouterMetrics(`${router.url}/metrics`) : [];
      printer.print(loopRows(await readLoopReadiness(client), now, before), new Date());
      before = now;
      statusError = '';
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (message !== statusError) say(`status unavailable: ${message}`);
      statusError = message;
    }
    await sleep(options.statusIntervalMs, undefined, { signal }).catch(() => {});
  }
  return 0;
}

export async function runDev(options: DevOptions, signal: AbortSignal): Promise<number> {
  const say = sayTo(options.out);
  await mkdir(logDirOf(options), { recursive: true });
  const session: DevSession = { started: [], appliedLoops: [], appliedHooks: [], projects: [], addresses: [], webhookRegistered: false };
  try {
    // First: the API server is started with a tracing configuration that names Jaeger's port.
    if (options.tracing) session.tracing = await startDevTracing(options.dir, options.out);
    const kubeconfigPath = await startCluster(options, session);
    if (signal.aborted) return 0;
    const client = (session.client = await KubeClient.fromKubeConfig(await loadKubeConfig({ kubeconfig: kubeconfigPath })));
    const discovery = new ResourceDiscovery(client);
    await installChart(options, session, client, discovery, say);
    // Before the platform: the processes it starts export their spans to the console (without --tracing).
    session.console = await startDevConsole(kubeconfigPath, session.tracing?.jaeger.queryUrl, () => session.started.find((p) => p.name === 'router')?.url, say);
    await startPlatform(options, session, client, discovery, kubeconfigPath, signal);
    const samples = options.samples && options.seeds ? await readManifests(join(REPO, 'samples')) : [];
    for (const { manifest } of samples) await applyManifest(client, discovery, manifest);
    // Ctrl+C during start-up: say nothing about a platform that is being stopped.
    if (signal.aborted) return 0;
    printRunning(options, session, samples, kubeconfigPath);
    return await showStatusUntilAborted(options, session.started, client, signal, session.projects);
  } catch (error) {
    // A terminal's Ctrl+C reaches the children too; one dying while it starts is part of stopping, not an error.
    if (signal.aborted) return 0;
    throw error;
  } finally {
    await stopDev(session, say);
  }
}
