// Who may receive what: the router's informers are shared, so before a Loop is sent anything (and again
// periodically, as RBAC changes) SubjectAccessReviews ask whether its ServiceAccount may list and watch
// every kind the Loop receives, in every namespace it covers.
import type { ServiceAccountRef } from '../../api/loop.ts';
import { serviceAccountGroups, serviceAccountUser, type KubeClient } from '../../lib/kube/kube-client.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import type { KindRef } from '../../api/meta.ts';
import type { LoopConfig } from '../base/loop-spec.ts';

export interface AccessCheck {
  verb: 'list' | 'watch';
  group: string;
  resource: string;
  /** undefined: cluster-wide (every namespace, or a cluster-scoped kind). */
  namespace: string | undefined;
}

export type AccessVerdict = { allowed: true } | { allowed: false; message: string };

/** The list and watch checks for the kinds a Loop receives: per namespace when it names namespaces. */
export function accessChecks(resources: readonly ResourceInfo[], namespaces: ReadonlySet<string> | undefined): AccessCheck[] {
  const checks: AccessCheck[] = [];
  const seen = new Set<string>();
  for (const r of resources) {
    const scopes = r.namespaced && namespaces && namespaces.size > 0 ? [...namespaces].sort() : [undefined];
    for (const namespace of scopes) {
      for (const verb of ['list', 'watch'] as const) {
        const key = `${verb} ${r.group}/${r.plural} ${namespace ?? ''}`;
        if (seen.has(key)) continue;
        seen.add(key);
        checks.push({ verb, group: r.group, resource: r.plural, namespace });
      }
    }
  }
  return checks;
}

/**
 * Every check a Loop needs: its primary and owned kinds in its namespaces, and each spec.related kind where
 * that entry looks (a named namespace, the Loop's namespaces, or all), so a related kind it may not read
 * stops the Loop before anything is sent.
 */
export async function loopAccessChecks(config: Pick<LoopConfig, 'for' | 'owns' | 'namespaces' | 'related'>, resolve: (ref: KindRef) => Promise<ResourceInfo>): Promise<AccessCheck[]> {
  const own = await Promise.all([config.for, ...config.owns].map(resolve));
  const checks = accessChecks(own, config.namespaces);
  for (const relation of config.related) {
    const resource = await resolve(relation.kind);
    const ns = relation.namespace;
    const scope = ns.from === 'named' ? new Set([ns.name]) : ns.from === 'primary' ? config.namespaces : undefined;
    for (const check of accessChecks([resource], scope)) {
      if (!checks.some((c) => c.verb === check.verb && c.group === check.group && c.resource === check.resource && c.namespace === check.namespace)) checks.push(check);
    }
  }
  return checks;
}

/** "list secrets in namespace a", "watch widgets.example.com in all namespaces". */
export function describeCheck(check: AccessCheck): string {
  const resource = check.group === '' ? check.resource : `${check.resource}.${check.group}`;
  return `${check.verb} ${resource} ${check.namespace ? `in namespace ${check.namespace}` : 'cluster-wide'}`;
}

interface SubjectAccessReviewStatus {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

/** Asks the API server about every check (with the router's own identity); the first denials name what is missing. */
export async function reviewAccess(client: KubeClient, serviceAccount: ServiceAccountRef, checks: readonly AccessCheck[]): Promise<AccessVerdict> {
  const user = serviceAccountUser(serviceAccount.namespace, serviceAccount.name);
  const groups = serviceAccountGroups(serviceAccount.namespace);
  const answers = await Promise.all(
    checks.map((check) =>
      client.request<SubjectAccessReviewStatus>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user,
            groups,
            resourceAttributes: { verb: check.verb, group: check.group, resource: check.resource, ...(check.namespace ? { namespace: check.namespace } : {}) },
          },
        },
      }),
    ),
  );
  const denied = checks.filter((_, i) => answers[i]?.status?.allowed !== true);
  if (denied.length === 0) return { allowed: true };
  const shown = denied.slice(0, 3).map(describeCheck).join(', ');
  const more = denied.length > 3 ? ` and ${denied.length - 3} more` : '';
  return {
    allowed: false,
    message: `ServiceAccount ${serviceAccount.namespace}/${serviceAccount.name} may not ${shown}${more}: the Loop receives nothing until its RBAC allows it`,
  };
}
