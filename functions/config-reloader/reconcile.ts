// The config-reloader: a Deployment annotated with a ConfigMap's name carries the hash of that ConfigMap's
// data in its pod template, so editing the ConfigMap rolls the Deployment. The ConfigMap arrives as a
// related object (spec.related "config"); a missing one is reported and the template left as it is.
import { createHash } from 'node:crypto';
import { event, patchAction, relatedNamed, respond, type KubeObject, type ReconcileRequest, type ReconcileResponse } from '../../lib/sdk/index.ts';

/** The Deployment annotation naming the ConfigMap (same namespace), as the Loop's nameFrom reads it. */
export const CONFIG_MAP_ANNOTATION = 'kubeloop.dev/config-map';
/** The pod template annotation holding the hash; a new value rolls the Deployment. */
export const CONFIG_HASH_ANNOTATION = 'kubeloop.dev/config-hash';
/** The spec.related entry the Loop sends the ConfigMap under. */
export const RELATED_CONFIG = 'config';

interface Deployment extends KubeObject {
  spec?: { template?: { metadata?: { annotations?: Record<string, string> } } };
}

/** sha256 of data and binaryData with sorted keys: the same content always hashes the same. */
export function configHash(configMap: KubeObject): string {
  const sorted = (map: unknown) => Object.fromEntries(Object.entries((map ?? {}) as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const canonical = JSON.stringify({ data: sorted(configMap.data), binaryData: sorted(configMap.binaryData) });
  return createHash('sha256').update(canonical).digest('hex').slice(0, 32);
}

export function reconcileConfigReloader(request: ReconcileRequest): ReconcileResponse {
  const deployment = request.object as Deployment;
  if (deployment.metadata?.deletionTimestamp || request.trigger.type === 'DELETED') return respond([]);
  const name = deployment.metadata?.annotations?.[CONFIG_MAP_ANNOTATION];
  if (!name) return respond([]);
  const configMap = relatedNamed(request, RELATED_CONFIG, name);
  if (!configMap) {
    // Keep the last hash: pods keep running with the config they have; the event says what is wrong.
    return respond([event('Warning', 'ConfigMapNotFound', `ConfigMap ${name} named by ${CONFIG_MAP_ANNOTATION} does not exist; the pod template keeps its last config hash`)]);
  }
  const hash = configHash(configMap);
  if (deployment.spec?.template?.metadata?.annotations?.[CONFIG_HASH_ANNOTATION] === hash) return respond([]);
  return respond([
    patchAction(deployment, (draft) => {
      const spec = (draft.spec ??= {});
      const template = (spec.template ??= {});
      const metadata = (template.metadata ??= {});
      metadata.annotations = { ...metadata.annotations, [CONFIG_HASH_ANNOTATION]: hash };
    }),
    event('Normal', 'ConfigChanged', `ConfigMap ${name} changed: pod template annotated with ${CONFIG_HASH_ANNOTATION}=${hash}`),
  ]);
}
