// REST paths of Kubernetes resources: what discovery learns about a kind and how URLs are built from it.

export interface ResourceInfo {
  /** "" for the core group. */
  group: string;
  version: string;
  /** apiVersion as objects carry it: "v1" or "apps/v1". */
  apiVersion: string;
  kind: string;
  /** Lower-case plural used in URLs, e.g. "pods". */
  plural: string;
  namespaced: boolean;
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/**
 * The usual plural resource of a kind, as the chart and kubebuilder derive it ("Widget" -> "widgets", "Policy"
 * -> "policies", "Ingress" -> "ingresses"), where discovery is not at hand; irregular kinds need it by hand.
 */
export function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

export function groupVersionPath(apiVersion: string): string {
  const { group, version } = splitApiVersion(apiVersion);
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

/** The collection URL; all namespaces when `namespace` is omitted for a namespaced resource. */
export function collectionPath(resource: ResourceInfo, namespace?: string): string {
  const base = groupVersionPath(resource.apiVersion);
  if (resource.namespaced && namespace) return `${base}/namespaces/${encodeURIComponent(namespace)}/${resource.plural}`;
  return `${base}/${resource.plural}`;
}

export function objectPath(resource: ResourceInfo, name: string, namespace?: string, subresource?: string): string {
  if (resource.namespaced && !namespace) {
    throw new Error(`${resource.kind} ${name}: a namespace is required for a namespaced resource`);
  }
  const path = `${collectionPath(resource, resource.namespaced ? namespace : undefined)}/${encodeURIComponent(name)}`;
  return subresource ? `${path}/${subresource}` : path;
}

/** "Pod.v1", "PodSet.app.kubeloop.dev/v1alpha1": the identity of a kind in logs and maps. */
export function kindKey(apiVersion: string, kind: string): string {
  return `${kind}.${apiVersion}`;
}
