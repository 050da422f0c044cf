// Which loops an event of the Loop or ClusterLoop informer enqueues (controller-runtime's handler): the loop
// itself on a change that matters to its run, and with the per-tenant limit the namespace's other Loops.
import type { KubeObject } from '../../lib/contract/types.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import type { InformerView } from '../base/informer-view.ts';

/**
 * Registers the handlers. `affected`: the other loops an added or gone Loop of the namespace may move over or
 * under its tenant's limit (tenant-loop-limit.ts); a relabelled or deleting Loop counts as added or gone.
 */
export function enqueueLoopEvents(informer: InformerView, enqueue: (id: string) => void, affected: (namespace: string | undefined) => string[]): void {
  const enqueueOne = (o: KubeObject) => enqueue(objectKey(o.metadata));
  const enqueueTenant = (o: KubeObject) => {
    enqueueOne(o);
    for (const id of affected(o.metadata?.namespace)) enqueue(id);
  };
  informer.on('add', enqueueTenant);
  informer.on('update', (o, previous) => {
    const relabelled = JSON.stringify(o.metadata?.labels ?? {}) !== JSON.stringify(previous.metadata?.labels ?? {});
    if (relabelled || o.metadata?.deletionTimestamp !== previous.metadata?.deletionTimestamp) enqueueTenant(o);
    else if (o.metadata?.generation !== previous.metadata?.generation) enqueueOne(o);
  });
  informer.on('delete', enqueueTenant);
}
