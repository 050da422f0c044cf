// --cluster-wide-watch: the kinds an operator lets the router list and watch once in every namespace (filtered
// per namespace for each Loop) instead of once per namespace; used only where the router's own RBAC allows it.
import type { Logger } from 'pino';
import { reviewOwnAccess } from '../../lib/kube/access-review.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';

/** A kind as RBAC names it: its plural resource and API group ('' for the core group). */
export interface GroupResource {
  resource: string;
  group: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Reads "configmaps,secrets,widgets.example.com" (kubectl's resource[.group]) as group resources; a malformed
 * entry is an error naming the setting.
 */
export function parseClusterWideWatches(value: string, setting: string): GroupResource[] {
  const kinds: GroupResource[] = [];
  for (const entry of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    const dot = entry.indexOf('.');
    const resource = dot < 0 ? entry : entry.slice(0, dot);
    const group = dot < 0 ? '' : entry.slice(dot + 1);
    if (!DNS_LABEL.test(resource) || (dot >= 0 && !group.split('.').every((label) => DNS_LABEL.test(label)))) {
      throw new Error(`${setting}: "${entry}" is not a resource[.group] such as configmaps or deployments.apps`);
    }
    if (!kinds.some((k) => k.resource === resource && k.group === group)) kinds.push({ resource, group });
  }
  return kinds;
}

/** Whether the operator opted this kind in. */
export function optedIn(kinds: readonly GroupResource[], resource: Pick<ResourceInfo, 'plural' | 'group'>): boolean {
  return kinds.some((k) => k.resource === resource.plural && k.group === resource.group);
}

export function describeGroupResource(kind: GroupResource): string {
  return kind.group === '' ? kind.resource : `${kind.resource}.${kind.group}`;
}

export interface ClusterWideWatchOptions {
  kinds: readonly GroupResource[];
  client: KubeClient;
  logger: Logger;
  /** Told once per opted-in kind whether it is watched cluster-wide or, for lack of rights, per namespace. */
  report?: (kind: string, state: 'cluster-wide' | 'per-namespace') => void;
}

/**
 * Decides, once per opted-in kind, whether the router may list and watch it in every namespace
 * (SelfSubjectAccessReview); a kind it may not is served per namespace as before, and the log says why.
 */
export class ClusterWideWatch {
  readonly #verdicts = new Map<string, Promise<boolean>>();
  constructor(private readonly options: ClusterWideWatchOptions) {}

  /** Whether namespaced acquires of `resource` share one cluster-wide informer. */
  async covers(resource: ResourceInfo): Promise<boolean> {
    if (!resource.namespaced || !optedIn(this.options.kinds, resource)) return false;
    const name = describeGroupResource({ resource: resource.plural, group: resource.group });
    let verdict = this.#verdicts.get(name);
    if (!verdict) {
      verdict = this.#review(resource, name);
      this.#verdicts.set(name, verdict);
    }
    return verdict;
  }

  async #review(resource: ResourceInfo, name: string): Promise<boolean> {
    const { client, logger, report } = this.options;
    const checks = (['list', 'watch'] as const).map((verb) => ({ verb, group: resource.group, resource: resource.plural, namespace: undefined }));
    try {
      const verdict = await reviewOwnAccess(client, checks);
      if (verdict.allowed) {
        logger.info({ resource: name }, 'cluster-wide watch: one informer for every namespace, filtered per Loop');
        report?.(name, 'cluster-wide');
        return true;
      }
      logger.warn({ resource: name, reason: verdict.message }, `--cluster-wide-watch names ${name} but the router ${verdict.message}: one informer per namespace instead (grant the router's ClusterRole get, list, watch on it, e.g. the chart's router.clusterWideWatches)`);
    } catch (error) {
      // Asked again by the next acquire: a passing API error must not pin the kind to per-namespace watches.
      this.#verdicts.delete(name);
      logger.warn({ resource: name, err: error }, `cluster-wide watch of ${name}: the access review failed; one informer per namespace for now`);
    }
    report?.(name, 'per-namespace');
    return false;
  }
}
