// Which keys a running Loop's informer events enqueue (controller-runtime's pkg/handler): a primary's own
// changes (filtered by updateTriggers), a child's to its controller owner (and to a former owner when the
// controller changed), and a 403 on any of its watches as Ready=False Forbidden.
import type { KubeObject, Trigger } from '../../lib/contract/types.ts';
import { isApiError } from '../../lib/kube/kube-client.ts';
import { controllerRef, controllerUid } from '../../lib/kube/object-meta.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import { selectsNamespace, updateTriggers } from '../base/predicates.ts';
import { watchEvent, type WatchEvent } from '../base/watch-events.ts';
import { UID_INDEX, type InformerLease } from './informer-registry.ts';
import type { RelatedWatch } from './related-watch.ts';

export interface RunnerSubscription {
  loop: LoopConfig;
  primary: InformerLease;
  owned: ReadonlyArray<InformerLease & { kind: LoopConfig['owns'][number] }>;
  related: RelatedWatch | undefined;
  enqueuePrimary: (object: KubeObject, trigger: Trigger, priority?: 'high' | 'low', event?: WatchEvent) => void;
  primaryDeleted: (object: KubeObject) => void;
  /** A primary called before its list was complete, by uid (early-primaries.ts): its children's changes reach it. */
  earlyOwner?: (uid: string) => KubeObject | undefined;
  stopped: () => boolean;
  /** A watch of the Loop was refused (403): its ServiceAccount lost a right. */
  forbidden: (message: string) => void;
}

/** Subscribes the Loop's handlers; returns the functions that remove them. */
export function subscribeRunner(s: RunnerSubscription): Array<() => void> {
  const { loop, related } = s;
  const primary = s.primary.informer;
  const indexed = loop.related.length > 0 && related ? (o: KubeObject) => related.indexPrimary(o) : () => {};
  const unsubscribe = [
    primary.on('add', (o) => {
      indexed(o);
      s.enqueuePrimary(o, { type: 'ADDED' });
    }),
    primary.on('update', (o, previous) => {
      indexed(o);
      if (updateTriggers(loop, previous, o)) s.enqueuePrimary(o, { type: 'MODIFIED' });
    }),
    primary.on('delete', (o) => s.primaryDeleted(o)),
  ];
  // A shared informer may have listed before this Loop subscribed: index what it holds already.
  for (const object of primary.store.list()) indexed(object);
  for (const owned of s.owned) {
    const enqueueOwner = (child: KubeObject, type: string) => enqueueOwnerOf(s, child, owned.kind, type);
    unsubscribe.push(
      owned.informer.on('add', (child) => enqueueOwner(child, 'ADDED')),
      owned.informer.on('delete', (child) => enqueueOwner(child, 'DELETED')),
      owned.informer.on('update', (child, previous) => {
        enqueueOwner(child, 'MODIFIED');
        // A child that changed controller also tells its former owner.
        if (controllerUid(previous) !== controllerUid(child)) enqueueOwner(previous, 'MODIFIED');
      }),
    );
  }
  for (const lease of [s.primary, ...s.owned, ...(related?.leases() ?? [])]) {
    unsubscribe.push(
      lease.informer.on('restart', (_reason, error) => {
        if (isApiError(error, 403)) s.forbidden(error?.message ?? 'forbidden');
      }),
    );
  }
  return unsubscribe;
}

/** A child's event enqueues its controller owner, when the owner is this Loop's primary and in its cache. */
function enqueueOwnerOf(s: RunnerSubscription, child: KubeObject, childKind: LoopConfig['owns'][number], type: string): void {
  if (s.stopped()) return;
  const ref = controllerRef(child);
  if (!ref || ref.apiVersion !== s.loop.for.apiVersion || ref.kind !== s.loop.for.kind) return;
  if (!selectsNamespace(s.loop, child.metadata?.namespace)) return;
  const owner = s.primary.informer.store.byIndex(UID_INDEX, ref.uid)[0] ?? s.earlyOwner?.(ref.uid);
  if (!owner) return;
  const namespace = child.metadata?.namespace;
  const name = child.metadata?.name ?? '';
  s.enqueuePrimary(
    owner,
    { type: 'CHILD', child: { apiVersion: childKind.apiVersion, kind: childKind.kind, ...(namespace ? { namespace } : {}), name } },
    'high',
    watchEvent('child', type, child),
  );
}
