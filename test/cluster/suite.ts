// What an e2e suite calls first: the shared control plane's admin KubeConfig, a fresh namespace named
// after the suite (with its default ServiceAccount ready for pods), the binaries, and a cleanup.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';
import type { ClusterBinaries } from '../../cli/cluster/index.ts';

export interface ClusterSuite {
  kubeConfig: KubeConfig;
  kubeconfigPath: string;
  server: string;
  namespace: string;
  binaries: ClusterBinaries;
  /** The control plane's folder (its PKI: the webhook client CA the gateway trusts); the shared plane's when absent. */
  clusterDir?: string;
  /** Deletes the namespace (the namespace controller removes what is in it). */
  cleanup(): Promise<void>;
}

/** "Router fault tests!" -> "router-fault-tests-3f9a": a valid DNS-1123 label, unique per run. */
export function namespaceFor(suite: string): string {
  const slug = suite
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50)
    .replace(/-+$/, '');
  return `${slug || 'suite'}-${randomBytes(2).toString('hex')}`;
}

/** A control plane of the suite's own (another Kubernetes version, say) instead of the shared one. */
export interface OwnPlane {
  kubeconfigPath: string;
  server: string;
  binaries: ClusterBinaries;
  dir: string;
}

export async function setupClusterSuite(suite: string, plane?: OwnPlane): Promise<ClusterSuite> {
  const kubeconfigPath = plane?.kubeconfigPath ?? inject('kubeconfig');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const namespace = namespaceFor(suite);
  await core.createNamespace({ body: { metadata: { name: namespace, labels: { 'kubeloop.dev/e2e-suite': namespace } } } });
  // ServiceAccount admission rejects pods until the controller manager has created "default".
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await core.readNamespacedServiceAccount({ name: 'default', namespace });
      break;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`ServiceAccount default not created in ${namespace} within 30s: ${String(error)}`);
      await sleep(100);
    }
  }
  return {
    kubeConfig,
    kubeconfigPath,
    server: plane?.server ?? inject('apiServer'),
    namespace,
    binaries: plane?.binaries ?? inject('clusterBinaries'),
    ...(plane ? { clusterDir: plane.dir } : {}),
    async cleanup(): Promise<void> {
      try {
        await core.deleteNamespace({ name: namespace });
      } catch (error) {
        if ((error as { code?: number }).code !== 404) throw error;
      }
    },
  };
}
