// Waits until CustomResourceDefinitions are Established by reading their status. `kubectl wait
// --for=condition=Established` fails at once, instead of waiting, while a just-created CRD has no status.conditions.
import type { KubeConfig } from '@kubernetes/client-node';
import { waitForCrdsEstablished } from '../../cli/dev/apply-manifests.ts';
import { KubeClient } from '../../lib/kube/index.ts';

export async function waitEstablished(kubeConfig: KubeConfig, names: readonly string[], timeoutMs = 60_000): Promise<void> {
  const client = await KubeClient.fromKubeConfig(kubeConfig);
  try {
    await waitForCrdsEstablished(client, [...names], timeoutMs);
  } finally {
    await client.close();
  }
}
