// The set-up every real-node suite starts from: a control plane with a real node, the Dockerfile's images (cached
// by content: .ci/run built them) imported into it, and the chart installed as users install it, pullPolicy Never.
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../../cli/cluster/index.ts';
import { cacheRoot } from '../../cli/cluster/versions.ts';
import { buildImages } from '../../cli/image/image-build.ts';
import { packOciArchive } from '../../cli/image/oci-image.ts';
import { withLayoutLock } from '../../cli/image/layout-lock.ts';
import { blockersMessage, realNodeBlockers } from '../../cli/cluster/real-node/preflight.ts';
import { CHART_DIR, helm } from '../e2e/chart-render.ts';
import { REPO_ROOT } from './production-bundle.ts';

export const RELEASE = 'kubeloop';
export const NAMESPACE = 'kubeloop-system';
export const log = (line: string): void => void process.stderr.write(`[real-node] ${line}\n`);

/**
 * Whether this machine can run a real node; one that cannot (no root, no runc) skips with the reason, but CI
 * (KUBELOOP_REQUIRE_REAL_NODE=1) runs anyway so that a missing tool fails instead of skipping.
 */
export async function realNodeRunnable(): Promise<boolean> {
  const blockers = await realNodeBlockers();
  if (blockers.length > 0 && process.env.KUBELOOP_REQUIRE_REAL_NODE !== '1') log(`skipped: ${blockersMessage(blockers)}`);
  return blockers.length === 0 || process.env.KUBELOOP_REQUIRE_REAL_NODE === '1';
}

/** Starts the plane with its real node and imports the Dockerfile's images into the node's containerd. */
export async function startRealNodeWithImages(): Promise<ControlPlane> {
  const plane = await startControlPlane({ realNode: true, onProgress: log });
  try {
    const layout = join(cacheRoot(), 'images', 'layout');
    const archive = join(plane.dir, 'images.tar');
    await withLayoutLock(layout, log, async () => {
      await buildImages({ repoRoot: REPO_ROOT, registry: 'ghcr.io/kubeloop', tag: '0.1.0', layout, onProgress: log });
      await packOciArchive(layout, archive);
    });
    await plane.realNode?.importImage(archive);
    return plane;
  } catch (error) {
    await plane.stop();
    throw error;
  }
}

/** `helm install` of the chart with pullPolicy Never and `args`; a failure names each pod's container states. */
export async function helmInstall(plane: ControlPlane, args: string[] = []): Promise<void> {
  const install = await helm(
    plane.binaries.helm,
    ['install', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--create-namespace', '--set', 'image.pullPolicy=Never', ...args],
    { KUBECONFIG: plane.kubeconfigPath },
  );
  if (install.code !== 0) {
    const pods = (await plane.kubeConfig().makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NAMESPACE })).items;
    throw new Error(`helm install failed:\n${install.stderr}\n${pods.map((p) => `${p.metadata?.name} ${JSON.stringify(p.status?.containerStatuses?.map((c) => c.state))}`).join('\n')}`);
  }
}

/** Starts the plane with its real node and `helm install`s the chart there, waiting for every pod. */
export async function installChartOnRealNode(): Promise<{ plane: ControlPlane; kc: KubeConfig }> {
  const plane = await startRealNodeWithImages();
  try {
    await helmInstall(plane, ['--wait', '--timeout', '5m']);
    return { plane, kc: plane.kubeConfig() };
  } catch (error) {
    await plane.stop();
    throw error;
  }
}
