// A ClusterLoop (`kubeloop init --cluster`) on dev's own control plane: the local router acts as the chart's
// ServiceAccount, which impersonates only the ClusterLoops' ServiceAccounts the chart renders from its values
// (router-rbac.yaml), as in production. A ClusterLoop applied from a file could never run there, so dev says so
// at start, with the two ways that do work, instead of a Loop that stays Forbidden.

/** The message refusing `file`'s ClusterLoop `name` when the router acts as the chart's ServiceAccount. */
export function clusterLoopRefusal(file: string, name: string): string {
  return (
    `--loop ${file}: ClusterLoop ${name} cannot run on kubeloop dev's own control plane. Its router acts as the chart's ServiceAccount, ` +
    'which may impersonate only the ClusterLoops the chart renders from values.yaml (as in production), not one applied from a file. ' +
    'Either test it as a namespaced Loop (kubeloop init without --cluster), or run dev against a control plane where the router acts as you: ' +
    '`kubeloop cluster up --detach`, then `kubeloop dev --kubeconfig <the kubeconfig it prints> --no-seeds --function ... --loop ' +
    `${file}\` (docs/writing-a-function.md#a-clusterloop-on-your-machine)`
  );
}
