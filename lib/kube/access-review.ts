// Who may receive what: before a Loop or an AdmissionHook is sent anything from the shared informers and context cache
// (and again as RBAC changes), SubjectAccessReviews ask whether its ServiceAccount may read every kind it receives,
// in every namespace it covers; and whether the process itself may list and watch what it watches cluster-wide.
import type { Logger } from 'pino';
import type { ServiceAccountRef } from '../../api/loop.ts';
import { serviceAccountGroups, serviceAccountUser, type KubeClient } from './kube-client.ts';
import type { ResourceInfo } from './resource-paths.ts';

export interface AccessCheck {
  verb: 'get' | 'list' | 'watch' | 'update' | 'patch';
  group: string;
  resource: string;
  /** A subresource ("status"); the gateway checks what a namespaced mutating hook may write. */
  subresource?: string;
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

/** "list secrets in namespace a", "watch widgets.example.com in all namespaces". */
export function describeCheck(check: AccessCheck): string {
  const main = check.group === '' ? check.resource : `${check.resource}.${check.group}`;
  const resource = check.subresource ? `${main}/${check.subresource}` : main;
  return `${check.verb} ${resource} ${check.namespace ? `in namespace ${check.namespace}` : 'cluster-wide'}`;
}

interface SubjectAccessReviewStatus {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

/**
 * Asks the API server about every check (with the caller's own identity); the first denials name what is
 * missing, then `consequence` says what follows.
 */
export async function reviewAccess(
  client: KubeClient,
  serviceAccount: ServiceAccountRef,
  checks: readonly AccessCheck[],
  consequence = 'the Loop receives nothing until its RBAC allows it',
): Promise<AccessVerdict> {
  const user = serviceAccountUser(serviceAccount.namespace, serviceAccount.name);
  const groups = serviceAccountGroups(serviceAccount.namespace);
  const denied = await deniedChecks(client, checks, 'SubjectAccessReview', { user, groups });
  if (denied.length === 0) return { allowed: true };
  const shown = denied.slice(0, 3).map(describeCheck).join(', ');
  const more = denied.length > 3 ? ` and ${denied.length - 3} more` : '';
  return {
    allowed: false,
    message: `ServiceAccount ${serviceAccount.namespace}/${serviceAccount.name} may not ${shown}${more}: ${consequence}`,
  };
}

/** What a process asks before it watches kinds cluster-wide, and what its warning says when it may not. */
export interface OwnWatchAccess {
  client: KubeClient;
  /** The kinds it would list and watch, cluster-wide. */
  resources: readonly ResourceInfo[];
  logger: Logger;
  /** Who asks, for the warning: "router", "gateway". */
  process: string;
  /** What the kinds are called in "could not ask whether it may watch …": "RBAC", "them". */
  what: string;
  /** What follows when it may not (what is then done on a timer only). */
  consequence: string;
}

/**
 * Whether the process may list and watch every kind cluster-wide (SelfSubjectAccessReview). When it may not, or the
 * review itself fails (a denial then, naming why), it warns once with the consequence and the right to grant.
 */
export async function reviewOwnWatchAccess(o: OwnWatchAccess): Promise<AccessVerdict> {
  let verdict: AccessVerdict;
  try {
    verdict = await reviewOwnAccess(o.client, accessChecks(o.resources, undefined));
  } catch (error) {
    verdict = { allowed: false, message: `could not ask whether it may watch ${o.what} (${(error as Error).message})` };
  }
  if (!verdict.allowed) o.logger.warn({ reason: verdict.message }, watchAccessWarning(o, verdict.message));
  return verdict;
}

/** "the gateway may not …: <consequence> (grant the gateway's ClusterRole list and watch on a, b and c, as the chart does)". */
export function watchAccessWarning(o: Pick<OwnWatchAccess, 'resources' | 'process' | 'consequence'>, reason: string): string {
  const plurals = o.resources.map((r) => r.plural);
  const kinds = plurals.length > 1 ? `${plurals.slice(0, -1).join(', ')} and ${plurals.at(-1)}` : (plurals[0] ?? '');
  return `the ${o.process} ${reason}: ${o.consequence} (grant the ${o.process}'s ClusterRole list and watch on ${kinds}, as the chart does)`;
}

/** A user as the API server authenticated it (what an aggregated API reads from the front proxy's headers). */
export interface UserInfo {
  user: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
}

export interface ResourceAttributes {
  verb: string;
  group: string;
  version?: string;
  resource: string;
  namespace?: string;
  name?: string;
}

/** Asks the API server whether this user may do this (the router's own ServiceAccount needs system:auth-delegator). */
export async function reviewUserAccess(client: KubeClient, who: UserInfo, attributes: ResourceAttributes): Promise<AccessVerdict> {
  const answer = await client.request<SubjectAccessReviewStatus>({
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: who.user, groups: who.groups, ...(who.uid ? { uid: who.uid } : {}), ...(who.extra ? { extra: who.extra } : {}), resourceAttributes: attributes },
    },
  });
  if (answer.status?.allowed === true) return { allowed: true };
  const reason = answer.status?.reason || answer.status?.evaluationError;
  return { allowed: false, message: reason ? `RBAC: ${reason}` : 'no RBAC rule allows it' };
}

/** Asks the API server what the caller itself may do (SelfSubjectAccessReview: every authenticated user may ask). */
export async function reviewOwnAccess(client: KubeClient, checks: readonly AccessCheck[]): Promise<AccessVerdict> {
  const denied = await deniedChecks(client, checks, 'SelfSubjectAccessReview', {});
  return denied.length === 0 ? { allowed: true } : { allowed: false, message: `may not ${denied.map(describeCheck).join(', ')}` };
}

/** The checks the API server does not allow, asked of it all at once for one subject (none: the caller). */
async function deniedChecks(client: KubeClient, checks: readonly AccessCheck[], kind: 'SubjectAccessReview' | 'SelfSubjectAccessReview', subject: { user?: string; groups?: string[] }): Promise<AccessCheck[]> {
  const plural = kind === 'SubjectAccessReview' ? 'subjectaccessreviews' : 'selfsubjectaccessreviews';
  const answers = await Promise.all(
    checks.map((check) =>
      client.request<SubjectAccessReviewStatus>({
        method: 'POST',
        path: `/apis/authorization.k8s.io/v1/${plural}`,
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind,
          spec: {
            ...subject,
            resourceAttributes: { verb: check.verb, group: check.group, resource: check.resource, ...(check.subresource ? { subresource: check.subresource } : {}), ...(check.namespace ? { namespace: check.namespace } : {}) },
          },
        },
      }),
    ),
  );
  return checks.filter((_, i) => answers[i]?.status?.allowed !== true);
}
