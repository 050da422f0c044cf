// Before a member starts keys it took over from another, its cache must show every child the previous owner
// created or deleted: that owner's expectations lived in its own memory, and a lagging watch here would
// make a PodSet create pods twice. Keys start once a fresh list of their children matches the cache.
import type { KubeObject } from '../../lib/contract/types.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { controllerUid } from '../../lib/kube/object-meta.ts';
import { CONTROLLER_UID_INDEX } from '../../lib/kube/object-store.ts';
import { collectionPath, type ResourceInfo } from '../../lib/kube/resource-paths.ts';
import type { StoreView } from '../base/informer-view.ts';

export interface ChildSource {
  resource: ResourceInfo;
  store: StoreView;
}

const uidsOf = (objects: readonly KubeObject[]) => objects.map((o) => o.metadata?.uid ?? '').sort().join(',');

/** The owners (by uid) whose children in the cache are exactly the listed ones: pure. */
export function settledOwners(ownerUids: Iterable<string>, listed: readonly KubeObject[], cachedChildren: (ownerUid: string) => KubeObject[]): Set<string> {
  const listedByOwner = new Map<string, KubeObject[]>();
  for (const child of listed) {
    const owner = controllerUid(child);
    if (owner) listedByOwner.set(owner, [...(listedByOwner.get(owner) ?? []), child]);
  }
  const settled = new Set<string>();
  for (const uid of ownerUids) {
    if (uidsOf(listedByOwner.get(uid) ?? []) === uidsOf(cachedChildren(uid))) settled.add(uid);
  }
  return settled;
}

/** Lists a kind's objects now (a quorum read, page by page) in the Loop's namespaces or cluster-wide. */
export async function listNow(client: KubeClient, resource: ResourceInfo, namespaces: ReadonlySet<string> | undefined): Promise<KubeObject[]> {
  const scopes = resource.namespaced && namespaces ? [...namespaces] : [undefined];
  const items: KubeObject[] = [];
  for (const namespace of scopes) {
    let next: string | undefined;
    do {
      const page = await client.request<{ items: KubeObject[]; metadata?: { continue?: string } }>({
        path: collectionPath(resource, namespace),
        query: { limit: 500, ...(next ? { continue: next } : {}) },
      });
      items.push(...page.items);
      next = page.metadata?.continue || undefined;
    } while (next);
  }
  return items;
}

/** The owners whose children of every owned kind match a fresh list. */
export async function ownersWithSettledChildren(client: KubeClient, sources: readonly ChildSource[], namespaces: ReadonlySet<string> | undefined, ownerUids: ReadonlySet<string>): Promise<Set<string>> {
  let settled = new Set(ownerUids);
  for (const { resource, store } of sources) {
    const listed = await listNow(client, resource, namespaces);
    settled = settledOwners(settled, listed, (uid) => store.byIndex(CONTROLLER_UID_INDEX, uid));
  }
  return settled;
}
