// Where an action lands: the target of a function's object or target, in the primary's namespace when it
// names none (a namespaced kind), and in no namespace for a cluster-scoped kind.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeObject, ObjectTarget } from '../../lib/contract/types.ts';
import { refersTo } from '../../lib/kube/object-meta.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { prepareChild } from './patch-building.ts';

export function namespaceFor(resource: ResourceInfo, namespace: string | undefined, primary: KubernetesObject): string | undefined {
  if (!resource.namespaced) return undefined;
  return namespace ?? primary.metadata?.namespace;
}

/** The object in the namespace its target resolves to: a namespaced object without one is in the primary's. */
export function inTargetNamespace(object: KubeObject, resource: ResourceInfo, primary: KubernetesObject): KubeObject {
  const namespace = namespaceFor(resource, object.metadata?.namespace, primary);
  return namespace === object.metadata?.namespace ? object : { ...object, metadata: { ...object.metadata, namespace } };
}

/**
 * What a server-side apply sends: the primary itself as the function gave it (in its own namespace when it
 * names none), anything else as the primary's child (prepareChild: namespace and controller reference).
 */
export function appliedObject(object: KubeObject, resource: ResourceInfo, primary: KubernetesObject): { object: KubeObject; isPrimary: boolean } {
  const isPrimary = refersTo(targetOf(object, resource, primary), primary);
  return { isPrimary, object: isPrimary ? inTargetNamespace(object, resource, primary) : prepareChild(object, primary, resource.namespaced) };
}

export function namespaceOf(object: KubeObject, resource: ResourceInfo): string | undefined {
  return resource.namespaced ? object.metadata?.namespace : undefined;
}

export function targetOf(object: KubeObject, resource: ResourceInfo, primary: KubernetesObject): ObjectTarget {
  return {
    apiVersion: object.apiVersion ?? '',
    kind: object.kind ?? '',
    namespace: namespaceFor(resource, object.metadata?.namespace, primary),
    name: object.metadata?.name ?? '',
  };
}
