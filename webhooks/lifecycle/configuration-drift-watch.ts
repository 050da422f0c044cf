// The gateway's webhook configurations, watched by its label (metadata only): one someone else edits, deletes or
// takes the label off is written back within about a second (hook-configuration-writer.ts `changed`), not at
// the next periodic review. A gateway that may not list and watch them says so and relies on that review.
import type { Logger } from 'pino';
import { gauge as makeGauge, type Registry } from '../../lib/observability/metrics.ts';
import type { KubeObject } from '../../lib/contract/types.ts';
import { reviewOwnWatchAccess } from '../../lib/kube/access-review.ts';
import { Informer, stripManagedFields } from '../../lib/kube/informer.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { MUTATING_WEBHOOK_CONFIGURATIONS, VALIDATING_WEBHOOK_CONFIGURATIONS } from '../../certs/ca-bundle.ts';
import { CONFIGURATION_TYPES, type ConfigurationType } from './hook-configuration-writer.ts';

const RESOURCES: Record<ConfigurationType, ResourceInfo> = { mutating: MUTATING_WEBHOOK_CONFIGURATIONS, validating: VALIDATING_WEBHOOK_CONFIGURATIONS };

export interface ConfigurationDriftWatchOptions {
  client: KubeClient;
  logger: Logger;
  /** The label every configuration of this gateway carries (configurationLabelSelector). */
  labelSelector: string;
  /** A configuration was updated (its resourceVersion) or deleted or left the selector (undefined). */
  changed: (type: ConfigurationType, name: string, resourceVersion: string | undefined) => void;
  metrics?: Registry;
}

export interface ConfigurationDriftWatch {
  stop(): Promise<void>;
}

/** Starts the two watches when the gateway may list and watch both kinds (SelfSubjectAccessReview); undefined else. */
export async function watchConfigurationDrift(o: ConfigurationDriftWatchOptions): Promise<ConfigurationDriftWatch | undefined> {
  const logger = o.logger.child({ component: 'configuration-watch' });
  const consequence = 'a webhook configuration someone else edits is written back at the next --access-review-seconds review only';
  const verdict = await reviewOwnWatchAccess({ client: o.client, resources: CONFIGURATION_TYPES.map((type) => RESOURCES[type]), logger, process: 'gateway', what: 'them', consequence });
  const watching = o.metrics
    ? makeGauge(o.metrics, 'kubeloop_webhook_configuration_watch', 'Whether the gateway watches its webhook configurations and writes back within seconds one someone else changed (1), or only at its periodic review (0: it may not list and watch them; its log says why)')
    : undefined;
  watching?.set(verdict.allowed ? 1 : 0);
  if (!verdict.allowed) return undefined;
  const informers = CONFIGURATION_TYPES.map((type) => {
    const informer = new Informer<KubeObject>({ client: o.client, resource: RESOURCES[type], labelSelector: o.labelSelector, metadataOnly: true, transform: stripManagedFields, logger }).start();
    // The first list tells what exists, not what changed: the writer compares only what it applied since.
    const tell = (object: KubeObject, resourceVersion: string | undefined) => {
      if (informer.hasSynced && object.metadata?.name) o.changed(type, object.metadata.name, resourceVersion);
    };
    informer.on('update', (object) => tell(object, object.metadata?.resourceVersion));
    informer.on('delete', (object) => tell(object, undefined));
    return informer;
  });
  return { stop: async () => void (await Promise.all(informers.map((informer) => informer.stop()))) };
}
