// `kubeloop dev`'s platform: the seed functions and their Loops, the user's projects, the router and the
// webhook gateway as local processes, each told where the projects' Services lead.
import type { KubeClient, ResourceDiscovery } from '../../lib/kube/index.ts';
import { admissionRegistry, functionRegistry } from '../../functions/registry.ts';
import { startLocalProcess, type LocalProcess } from './local-processes.ts';
import { FUNCTION_NODE_FLAGS } from '../node-flags.ts';
import { startProjectFunction } from './project-function.ts';
import { startServiceAddress } from './service-address.ts';
import { chartAccountKubeconfigs } from './chart-platform.ts';
import { createTenantUser } from './tenant-user.ts';
import { applySampleAdmissionHooks, sampleAdmissionHookNames, waitForHooksReady } from './sample-admission-hooks.ts';
import { generateSigningSecret } from '../../lib/signing/webhook-signature.ts';
import { GATEWAY_ADMISSIONS, prepareDevHistoryApi, registerDevHistoryApi } from './dev-history-api.ts';
import { applySampleLoops } from './sample-loops.ts';
import { startLocalGateway, startLocalRouter } from './platform-processes.ts';
import { logDirOf, sayTo, type DevOptions } from './dev-options.ts';
import type { DevSession } from './dev-session.ts';

/** The port the chart's function Services listen on (functionDefaults.port). */
const FUNCTION_SERVICE_PORT = 8080;

/** The seed functions, the user's function, their Loops, the router and the webhook; stops early on abort. */
export async function startPlatform(options: DevOptions, session: DevSession, client: KubeClient, discovery: ResourceDiscovery, kubeconfigPath: string, signal: AbortSignal): Promise<void> {
  const { started, appliedLoops } = session;
  const say = sayTo(options.out);
  const logDir = logDirOf(options);
  const seedNames = options.seeds ? Object.keys(functionRegistry).sort() : [];
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
    const fn = await startLocalProcess({ name: `function-${name}`, args: ['function', name], nodeFlags: FUNCTION_NODE_FLAGS, logDir, env: { KUBELOOP_SIGNING_SECRET: keys.get(name) } });
    started.push(fn);
    functions.set(name, fn);
  }

  const admissionFunctions = new Map<string, LocalProcess>();
  for (const name of admissionNames) {
    if (signal.aborted) break;
    const fn = await startLocalProcess({ name: `function-${name}`, args: ['function', name], nodeFlags: FUNCTION_NODE_FLAGS, logDir });
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
    const project = await startProjectFunction(client, session.tenant?.client ?? client, spec, logDir, say, { chartAccount: session.plane !== undefined });
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
  const connectEntries = [...session.addresses.map((a) => a.entry), ...session.projects.flatMap((p) => p.connectEntries)];
  const wiring = (kubeconfig: string) => ({ kubeconfig, connectEntries, logDir, ...(session.plane ? { plane: session.plane } : {}) });

  if (!signal.aborted) {
    // On its own control plane (front-proxy CA, aggregation layer) the router serves the history API too.
    const historyApi = session.plane ? await prepareDevHistoryApi(options.dir, options.namespace) : undefined;
    started.push(await startLocalRouter(wiring(accounts.router), historyApi?.serverArgs ?? []));
    if (historyApi) {
      const problem = await registerDevHistoryApi(client, discovery, historyApi, options.namespace, signal);
      if (problem) say(`note: kubeloop history is unavailable: ${problem}`);
      else session.historyApi = historyApi.port;
    }
  }
  if (options.webhook && !signal.aborted) {
    // The gateway's admission history, registered as the router's history API is (the console reads it).
    const admissionsApi = session.plane ? await prepareDevHistoryApi(options.dir, options.namespace, GATEWAY_ADMISSIONS) : undefined;
    started.push(await startLocalGateway(wiring(accounts.webhook), options.namespace, admissionsApi?.serverArgs ?? []));
    session.webhookRegistered = true;
    const admissionsProblem = admissionsApi && (await registerDevHistoryApi(client, discovery, admissionsApi, options.namespace, signal));
    if (admissionsProblem) say(`note: the console shows no admission history: ${admissionsProblem}`);
    const serviceOf = (hook: string) => session.addresses.find((a) => a.service.name === `kubeloop-${hook}`)?.service;
    session.appliedHooks.push(...(await applySampleAdmissionHooks(client, discovery, (name) => admissionFunctions.get(name)?.url, say, serviceOf)));
    await waitForHooksReady(client, session.appliedHooks, say, signal);
  }
}
