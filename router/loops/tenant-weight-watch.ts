// Tenant weights from the Namespace label kubeloop.dev/tenant-weight: a metadata-only watch on Namespaces
// feeds TenantWeights; a router not allowed to list Namespaces runs on the configured weights and says so.
import type { Logger } from 'pino';
import type { KubeObject } from '../../lib/contract/types.ts';
import type { InformerLease, InformerSource } from '../intake/informer-registry.ts';
import { TENANT_WEIGHT_LABEL, type TenantWeights } from '../base/tenant-weights.ts';

export async function watchTenantWeights(registry: InformerSource, weights: TenantWeights, logger: Logger): Promise<InformerLease | undefined> {
  let lease: InformerLease;
  try {
    lease = await registry.acquire({ apiVersion: 'v1', kind: 'Namespace' }, true);
  } catch (error) {
    logger.warn({ err: (error as Error).message }, `cannot watch Namespaces: the ${TENANT_WEIGHT_LABEL} label is ignored, --tenant-weights and the default 1 apply`);
    return undefined;
  }
  const seen = (o: KubeObject) => weights.setLabel(o.metadata?.name ?? '', o.metadata?.labels?.[TENANT_WEIGHT_LABEL]);
  lease.informer.on('add', seen);
  lease.informer.on('update', seen);
  lease.informer.on('delete', (o) => weights.setLabel(o.metadata?.name ?? '', undefined));
  for (const namespace of lease.informer.store.list()) seen(namespace);
  lease.informer.on('restart', (_reason, error) => {
    if (error) logger.warn({ err: error.message }, `the Namespace watch for ${TENANT_WEIGHT_LABEL} restarted`);
  });
  return lease;
}
