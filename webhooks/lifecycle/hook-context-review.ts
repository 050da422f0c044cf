// Whether a hook may be served its context objects: the kinds exist, a namespaced hook's are namespaced, and
// its ServiceAccount may get them where it reads them (SubjectAccessReview); if so its caches are started, a
// namespaced hook's in its own namespace only, without waiting for them to sync (context-cache.ts).
import { reviewAccess } from '../../lib/kube/access-review.ts';
import type { KubeClient, ResourceInfo } from '../../lib/kube/index.ts';
import type { ConditionInput } from '../../lib/sdk/conditions.ts';
import type { ContextCache } from '../gateway/context-cache.ts';
import { contextAccessChecks } from './hook-access.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';
import { notReady } from './hook-status.ts';

/**
 * Why the hook may not be served its context: its ServiceAccount may not get a kind where the hook reads it
 * (Forbidden, checked before any cache of the kind starts), or the kind is unknown (ContextUnavailable).
 * Otherwise its caches are started (a namespaced hook's in its namespace only) without waiting for them.
 */
export async function contextRefusal(hook: ResolvedHook, { contexts, client }: { contexts: ContextCache; client: KubeClient }, cacheKeys: Set<string>): Promise<ConditionInput | undefined> {
  if (hook.context.length === 0) return undefined;
  const resources = new Map<string, ResourceInfo>();
  try {
    for (const entry of hook.context) resources.set(entry.name, await contexts.resolve(entry.apiVersion, entry.kind));
  } catch (error) {
    return notReady('ContextUnavailable', `context objects cannot be cached: ${error instanceof Error ? error.message : String(error)}`, hook.generation);
  }
  // An AdmissionHook reads context from its own namespace only: a cluster-scoped kind has no namespace.
  const clusterScoped = hook.namespace ? hook.context.find((entry) => !resources.get(entry.name)?.namespaced) : undefined;
  if (clusterScoped) {
    return notReady('InvalidSpec', `context "${clusterScoped.name}": ${clusterScoped.kind} (${clusterScoped.apiVersion}) is cluster-scoped; an AdmissionHook reads context only from its own namespace (${hook.namespace})`, hook.generation);
  }
  // A review that cannot be made (the API server does not answer) fails the whole reconcile, which is
  // retried with the configuration as it was: a blip never unregisters a hook that was serving.
  const checks = contextAccessChecks(hook.context, (entry) => resources.get(entry.name)!);
  const verdict = await reviewAccess(client, hook.spec.serviceAccount, checks, 'the hook is not registered and its function is sent nothing until that RBAC exists');
  if (!verdict.allowed) return notReady('Forbidden', verdict.message, hook.generation);
  for (const resource of resources.values()) cacheKeys.add(contexts.ensure(resource, hook.namespace));
  return undefined;
}
