// The gateway's hooks are reviewed again within about a second of an RBAC write (lib/kube/rbac-watch.ts), not
// only on the --access-review-seconds timer: a namespace admin who revokes a hook ServiceAccount's rights (or a
// cluster admin who narrows a ClusterRole) stops the hook's writes and context reads at once.
import type { Logger } from 'pino';
import { gauge as makeGauge, type Registry } from '../../lib/observability/metrics.ts';
import { Informer, stripManagedFields } from '../../lib/kube/informer.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { watchRbac, type RbacWatch } from '../../lib/kube/rbac-watch.ts';

export interface HookRbacWatchOptions {
  client: KubeClient;
  logger: Logger;
  /** Judge every hook again (HookController.schedule: one pass for any number of changes). */
  review: () => void;
  /** The watch was refused after its start (the gateway's ClusterRole lost the read): only the timer reviews now. */
  onLost?: () => void;
  /** ... and accepted again: changes are seen again (every hook was just reviewed once more). */
  onRegained?: () => void;
  metrics?: Registry;
}

/** Starts the four metadata-only RBAC watches, or logs why not (the timer alone reviews then); never throws. */
export async function watchHookRbac(o: HookRbacWatchOptions): Promise<RbacWatch | undefined> {
  const gauge = o.metrics
    ? makeGauge(
        o.metrics,
        'kubeloop_webhook_rbac_watch',
        "1 while the gateway watches RBAC and reviews its hooks' ServiceAccount rights again within seconds of a change; 0 while only the --access-review-seconds timer does (the gateway may not list and watch roles, rolebindings, clusterroles and clusterrolebindings; its log says why)",
      )
    : undefined;
  gauge?.set(0);
  const logger = o.logger.child({ component: 'rbac-watch' });
  try {
    const watch = await watchRbac({
      client: o.client,
      logger,
      process: 'gateway',
      reviewed: "a hook's ServiceAccount rights",
      acquire: async (resource) => {
        const informer = new Informer({ client: o.client, resource, metadataOnly: true, transform: stripManagedFields, logger }).start();
        return { informer, release: () => informer.stop() };
      },
      onChanges: () => o.review(),
      onLost: () => {
        gauge?.set(0);
        o.onLost?.();
      },
      onRegained: () => {
        gauge?.set(1);
        o.onRegained?.();
      },
    });
    if ('denied' in watch) return undefined;
    gauge?.set(1);
    return watch;
  } catch (error) {
    logger.warn({ err: (error as Error).message }, "cannot watch RBAC: a hook's ServiceAccount rights are reviewed on the --access-review-seconds timer only");
    return undefined;
  }
}
