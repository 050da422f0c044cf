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

/** How often a kind served per namespace for lack of rights is asked about again when not told (--access-review-seconds). */
export const DEFAULT_CLUSTER_WIDE_RECHECK_MS = 5 * 60_000;

export interface ClusterWideWatchOptions {
  kinds: readonly GroupResource[];
  client: KubeClient;
  logger: Logger;
  /** Told whenever an opted-in kind is found watchable cluster-wide or, for lack of rights, only per namespace. */
  report?: (kind: string, state: 'cluster-wide' | 'per-namespace') => void;
  /**
   * A kind changed how it is served after Loops acquired it: lost (the shared watch was refused) or regained
   * (a periodic review allowed it again). Loops on it must acquire again to move.
   */
  changed?: (resource: ResourceInfo, state: 'cluster-wide' | 'per-namespace') => void;
  /** How often a kind the router may not watch cluster-wide is asked about again; DEFAULT_CLUSTER_WIDE_RECHECK_MS. */
  recheckMs?: number;
}

/**
 * Decides whether the router may list and watch an opted-in kind in every namespace (SelfSubjectAccessReview);
 * a kind it may not is served per namespace as before, and the log says why. A shared watch the API server
 * later refuses (its ClusterRole lost the rule) falls back to per namespace at once (lost); a kind served per
 * namespace is asked about again on every recheck period and returns to one watch when allowed again.
 */
export class ClusterWideWatch {
  readonly #verdicts = new Map<string, Promise<boolean>>();
  /** Kinds served per namespace for lack of rights, asked about again on each recheck. */
  readonly #denied = new Map<string, ResourceInfo>();
  #timer: NodeJS.Timeout | undefined;
  constructor(private readonly options: ClusterWideWatchOptions) {}

  /** Whether namespaced acquires of `resource` share one cluster-wide informer. */
  async covers(resource: ResourceInfo): Promise<boolean> {
    if (!resource.namespaced || !optedIn(this.options.kinds, resource)) return false;
    const name = nameOf(resource);
    let verdict = this.#verdicts.get(name);
    if (!verdict) {
      verdict = this.#review(resource, name);
      this.#verdicts.set(name, verdict);
    }
    return verdict;
  }

  /** The shared watch of `resource` was refused (403): per namespace from now on, until a recheck allows it again. */
  async lost(resource: ResourceInfo, error: Error): Promise<void> {
    const name = nameOf(resource);
    if (!(await this.#verdicts.get(name))) return;
    this.#verdicts.set(name, Promise.resolve(false));
    this.options.logger.warn(
      { resource: name, err: error.message },
      `cluster-wide watch of ${name} refused (the router's ClusterRole lost list or watch on it?): its Loops move to one watch per namespace, as without --cluster-wide-watch, and it is reviewed again every ${Math.round(this.#recheckMs / 1000)} s`,
    );
    this.#deny(resource, name);
    this.options.changed?.(resource, 'per-namespace');
  }

  /** Asks again about every kind served per namespace for lack of rights (the recheck period; tests call it). */
  async recheck(): Promise<void> {
    for (const [name, resource] of [...this.#denied]) {
      const verdict = this.#review(resource, name);
      this.#verdicts.set(name, verdict);
      if (await verdict) this.options.changed?.(resource, 'cluster-wide');
    }
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  get #recheckMs(): number {
    return this.options.recheckMs ?? DEFAULT_CLUSTER_WIDE_RECHECK_MS;
  }

  #deny(resource: ResourceInfo, name: string): void {
    this.#denied.set(name, resource);
    this.options.report?.(name, 'per-namespace');
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.recheck().catch(() => {}), this.#recheckMs);
    this.#timer.unref();
  }

  async #review(resource: ResourceInfo, name: string): Promise<boolean> {
    const { client, logger, report } = this.options;
    const checks = (['list', 'watch'] as const).map((verb) => ({ verb, group: resource.group, resource: resource.plural, namespace: undefined }));
    try {
      const verdict = await reviewOwnAccess(client, checks);
      if (verdict.allowed) {
        logger.info({ resource: name }, 'cluster-wide watch: one informer for every namespace, filtered per Loop');
        this.#denied.delete(name);
        report?.(name, 'cluster-wide');
        return true;
      }
      if (!this.#denied.has(name)) logger.warn({ resource: name, reason: verdict.message }, `--cluster-wide-watch names ${name} but the router ${verdict.message}: one informer per namespace instead (grant the router's ClusterRole get, list, watch on it, e.g. the chart's router.clusterWideWatches)`);
      this.#deny(resource, name);
    } catch (error) {
      // Asked again by the next acquire: a passing API error must not pin the kind to per-namespace watches.
      this.#verdicts.delete(name);
      logger.warn({ resource: name, err: error }, `cluster-wide watch of ${name}: the access review failed; one informer per namespace for now`);
      report?.(name, 'per-namespace');
    }
    return false;
  }
}

function nameOf(resource: ResourceInfo): string {
  return describeGroupResource({ resource: resource.plural, group: resource.group });
}
