// A KubeClient for a local HTTPS server standing in for the API server (the transport tests of lib/kube): trusts the
// test certificate and sends a bearer token, as the router's kubeconfig does.
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeClientOptions } from '../../lib/kube/kube-client.ts';

export function localKubeClient(port: number, caPem: string, options: KubeClientOptions): Promise<KubeClient> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(caPem).toString('base64') }],
    users: [{ name: 'router', token: 'router-token' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'router' }],
    currentContext: 'c',
  });
  return KubeClient.fromKubeConfig(kubeConfig, options);
}
