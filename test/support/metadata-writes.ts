// Objects of a kind whose metadata uses every ObjectMeta field, and the form their metadata is compared in: what the
// protobuf e2e tests (protobuf-watch, protobuf-list) read in both media types.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeClient } from '../../lib/kube/kube-client.ts';

/** An object as the router keeps it: managedFields dropped, and Go's `"creationTimestamp": null` of the zero time left out. */
export function comparableObject(object: KubernetesObject): KubernetesObject {
  const { managedFields: _managed, creationTimestamp, ...metadata } = object.metadata ?? {};
  return { ...object, metadata: { ...metadata, ...(creationTimestamp ? { creationTimestamp } : {}) } };
}

/** Writes that give every ObjectMeta field a value: labels, annotations, an owner, finalizers, generation, a deletion, managedFields. */
export async function writeEverything(client: KubeClient, path: string, apiVersion: string, kind: string): Promise<void> {
  const query = { fieldManager: 'protobuf-watch-e2e' };
  const owner = await client.request<KubernetesObject>({ method: 'POST', path, query, body: { apiVersion, kind, metadata: { name: 'owner' } } });
  await client.request({
    method: 'POST',
    path,
    query,
    body: {
      apiVersion,
      kind,
      metadata: {
        generateName: 'child-',
        labels: { app: 'web', tier: 'front' },
        annotations: { note: 'grüß dich', empty: '' },
        ownerReferences: [{ apiVersion, kind, name: 'owner', uid: owner.metadata?.uid, controller: true, blockOwnerDeletion: false }],
        finalizers: ['e2e.kubeloop.dev/hold'],
      },
    },
  });
  await client.request({ method: 'PATCH', path: `${path}/owner`, query, contentType: 'application/merge-patch+json', body: { metadata: { labels: { changed: 'yes' } } } });
  await client.request({ method: 'POST', path, query, body: { apiVersion, kind, metadata: { name: 'held', finalizers: ['e2e.kubeloop.dev/hold'] } } });
  await client.request({ method: 'DELETE', path: `${path}/held`, body: { gracePeriodSeconds: 0 } });
}
