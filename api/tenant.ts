// Who a kubeloop object is charged to in every shared budget (the router's and the gateway's): its namespace,
// or one key for all cluster-scoped kinds (ClusterLoops, ClusterAdmissionHooks). docs/tenants.md.

/**
 * The tenant of every ClusterLoop and ClusterAdmissionHook, and its metrics label. `_` is not allowed in a
 * namespace name (a DNS label), so no namespace can take this key and share the cluster kinds' shares, weight,
 * limits or metrics; it reads plainly in a `tenant` label and needs no quoting on a command line.
 */
export const CLUSTER_TENANT = '_cluster';

/** The tenant of an object in `namespace` (undefined or empty: a cluster-scoped kind). */
export const tenantOfNamespace = (namespace: string | undefined): string => namespace || CLUSTER_TENANT;
