// Creating and deleting whole webhook configurations, for cluster tests and fixture recording: the shipped code
// only injects a caBundle into configurations someone else made (certs/ca-bundle.ts).
import { isApiError, type KubeClient } from '../../lib/kube/index.ts';
import { collectionPath, configurationPath, type ConfigurationRef, type WebhookConfiguration, type WebhookConfigurationKind } from '../../certs/ca-bundle.ts';

/** Creates the configuration (of desired.kind; Mutating when unset) or replaces it with `desired`, keeping its resourceVersion. */
export async function applyWebhookConfiguration(client: KubeClient, desired: WebhookConfiguration): Promise<'created' | 'updated'> {
  const kind: WebhookConfigurationKind = desired.kind === 'ValidatingWebhookConfiguration' ? desired.kind : 'MutatingWebhookConfiguration';
  const ref = { kind, name: desired.metadata?.name ?? '' };
  for (let attempt = 0; attempt < 8; attempt++) {
    try {
      const current = await client.request<WebhookConfiguration>({ path: configurationPath(ref) });
      const body = { ...desired, metadata: { ...desired.metadata, resourceVersion: current.metadata?.resourceVersion } };
      await client.request({ method: 'PUT', path: configurationPath(ref), body });
      return 'updated';
    } catch (error) {
      if (isApiError(error, 409)) continue;
      if (!isApiError(error, 404)) throw error;
    }
    try {
      await client.request({ method: 'POST', path: collectionPath(kind), body: desired });
      return 'created';
    } catch (error) {
      if (!isApiError(error, 409)) throw error;
    }
  }
  throw new Error(`${kind} ${ref.name}: still conflicting after 8 attempts`);
}

export async function deleteWebhookConfiguration(client: KubeClient, name: ConfigurationRef): Promise<void> {
  try {
    await client.request({ method: 'DELETE', path: configurationPath(name) });
  } catch (error) {
    if (!isApiError(error, 404)) throw error;
  }
}
