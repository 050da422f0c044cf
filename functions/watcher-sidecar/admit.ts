// One admission decision of the Watcher sidecar injector: which requests are ours, the Watcher the gateway
// sent as context (the pod's watch.kubeloop.dev/watcher annotation, in the pod's namespace), the
// missing-Watcher policy, and the reply. Pure: the function holds no credentials and reads no cache.
import type { V1Pod } from '@kubernetes/client-node';
import type { Watcher } from '../../api/watcher.ts';
import { allow, allowWithPatch, deny, type AdmissionRequest, type AdmissionResponse } from '../../lib/sdk/index.ts';
import { planInjection, requestedWatcher } from './inject-sidecar.ts';
import { isInjectable } from './watcher.ts';

/** The AdmissionHook context entry that carries the pod's Watcher (charts/, samples/admission-hooks/). */
export const WATCHER_CONTEXT = 'watcher';

export type MissingWatcherPolicy = 'allow' | 'deny';

export interface WatcherSidecarConfig {
  missingWatcher: MissingWatcherPolicy;
}

function isPodCreate(request: AdmissionRequest): boolean {
  return (
    request.operation === 'CREATE' &&
    request.requestKind.kind === 'Pod' &&
    request.requestKind.group === '' &&
    request.resource.resource === 'pods' &&
    !request.subResource
  );
}

export function admitWatcherSidecar(request: AdmissionRequest, config: WatcherSidecarConfig): AdmissionResponse {
  // Not ours (another kind, an UPDATE/DELETE, a subresource): allowed unchanged, the API server decides.
  if (!isPodCreate(request)) return allow();
  const pod = request.object as V1Pod | undefined;
  if (typeof pod !== 'object' || pod === null) return allow();
  const watcherName = requestedWatcher(pod);
  if (!watcherName) return allow();
  if (!(WATCHER_CONTEXT in request.context)) {
    // A hook written without the context entry: say how to fix it rather than inject nothing silently.
    return allow({ warnings: [`admission hook "${request.hook}" sends no "${WATCHER_CONTEXT}" context object; pod admitted without the Watcher sidecar (docs/webhook.md)`] });
  }

  // metadata.namespace may be empty at admission; the request always names the namespace.
  const namespace = request.namespace || pod.metadata?.namespace || 'default';
  const watcher = request.context[WATCHER_CONTEXT] as Watcher | null;
  if (!watcher) {
    if (config.missingWatcher === 'deny') return deny(`Watcher "${watcherName}" not found in namespace "${namespace}"`);
    return allow({ warnings: [`Watcher "${watcherName}" not found in namespace "${namespace}"; pod admitted without the sidecar`] });
  }
  if (!isInjectable(watcher)) {
    return allow({ warnings: [`Watcher "${watcherName}" has no spec.container.image; pod admitted without the sidecar`] });
  }
  let plan;
  try {
    plan = planInjection(pod, watcher);
  } catch (error) {
    // A Watcher the CRD schema let through in a shape we cannot use (its container preserves unknown
    // fields): admit the pod without the sidecar and say why, rather than fail the API request.
    const reason = error instanceof Error ? error.message : String(error);
    return allow({ warnings: [`Watcher "${watcherName}" could not be injected (${reason}); pod admitted without the sidecar`] });
  }
  if (plan.action === 'skip') return allow({ warnings: plan.warnings });
  return allowWithPatch(plan.patch, { warnings: plan.warnings });
}
