// `kubeloop dev`: the whole platform on a local control plane (or an existing cluster): CRDs, the functions,
// their Loops pointed at 127.0.0.1, the router, the webhook gateway in dev mode with the sample
// AdmissionHooks (the Watcher sidecar injector), the samples; then a live status
// until the signal aborts, and a clean stop of everything it started.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeClient, loadKubeConfig, ResourceDiscovery } from '../../lib/kube/index.ts';
import { packageRoot } from '../package-root.ts';
import { applyManifest, readManifests } from './apply-manifests.ts';
import { startDevTracing } from './dev-tracing.ts';
import { startDevConsole } from '../console/dev-console.ts';
import { logDirOf, sayTo, type DevOptions } from './dev-options.ts';
import { installChart, startCluster, stopDev, type DevSession } from './dev-session.ts';
import { startPlatform } from './start-platform.ts';
import { printRunning, showStatusUntilAborted } from './dev-output.ts';

export type { DevOptions } from './dev-options.ts';

const REPO = packageRoot();

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
