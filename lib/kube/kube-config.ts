// Loads a KubeConfig from an explicit file, the in-cluster service account, or the usual defaults.
import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';

export interface KubeConfigSource {
  /** Path to a kubeconfig file; wins over everything else. */
  kubeconfig?: string;
  /** Context to use inside the file. */
  context?: string;
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export function loadKubeConfig(source: KubeConfigSource = {}): KubeConfig {
  const kc = new KubeConfig();
  if (source.kubeconfig) {
    if (!existsSync(source.kubeconfig)) throw new Error(`kubeconfig: file "${source.kubeconfig}" does not exist`);
    kc.loadFromFile(source.kubeconfig);
  } else if (process.env.KUBECONFIG) {
    kc.loadFromDefault();
  } else if (process.env.KUBERNETES_SERVICE_HOST && existsSync(SERVICE_ACCOUNT_TOKEN)) {
    kc.loadFromCluster();
  } else {
    kc.loadFromDefault();
  }
  if (source.context) {
    if (!kc.getContextObject(source.context)) throw new Error(`kubeconfig: no context named "${source.context}"`);
    kc.setCurrentContext(source.context);
  }
  if (!kc.getCurrentCluster()) throw new Error('kubeconfig: no current cluster (set --kubeconfig or KUBECONFIG)');
  return kc;
}
