// One admission decision for POST /mutate/watcher-sidecar: which requests are ours, the Watcher lookup
// in the informer cache, the missing-Watcher policy, and the response. Pure apart from the lookup.
import type { V1Pod } from '@kubernetes/client-node';
import { allow, allowWithPatch, deny, type AdmissionRequest, type AdmissionResponse } from './admission-review.ts';
import { planInjection, requestedWatcher } from './inject-sidecar.ts';
import { isInjectable, type WatcherLookup } from './watcher.ts';

export type MissingWatcherPolicy = 'allow' | 'deny';

/** Bounded metric label: what the webhook did with one review. */
export type AdmissionOutcome = 'injected' | 'skipped' | 'not-handled' | 'missing-watcher' | 'denied' | 'failed';

export interface AdmitResult {
  response: AdmissionResponse;
  outcome: AdmissionOutcome;
  /** The Watcher the pod named, for the log line. */
  watcher?: string;
}

export interface AdmitOptions {
  watchers: WatcherLookup;
  missingWatcher: MissingWatcherPolicy;
}

function isPodCreate(request: AdmissionRequest): boolean {
  return (
    request.operation === 'CREATE' &&
    request.kind.kind === 'Pod' &&
    (request.kind.group ?? '') === '' &&
    request.resource.resource === 'pods' &&
    !request.subResource
  );
}

export function admitPod(request: AdmissionRequest, options: AdmitOptions): AdmitResult {
  const { uid } = request;
  // Not ours (another kind, an UPDATE/DELETE, a subresource): allowed unchanged, the API server decides.
  if (!isPodCreate(request)) return { response: allow(uid), outcome: 'not-handled' };
  const pod = request.object as V1Pod | undefined;
  if (typeof pod !== 'object' || pod === null) return { response: allow(uid), outcome: 'not-handled' };
  const watcherName = requestedWatcher(pod);
  if (!watcherName) return { response: allow(uid), outcome: 'skipped' };

  // metadata.namespace may be empty at admission; the request always names the namespace.
  const namespace = request.namespace || pod.metadata?.namespace || 'default';
  const watcher = options.watchers.get(namespace, watcherName);
  if (!watcher) {
    const message = `Watcher "${watcherName}" not found in namespace "${namespace}"; pod admitted without the sidecar`;
    if (options.missingWatcher === 'deny') {
      return { response: deny(uid, 403, `Watcher "${watcherName}" not found in namespace "${namespace}"`), outcome: 'denied', watcher: watcherName };
    }
    return { response: allow(uid, [message]), outcome: 'missing-watcher', watcher: watcherName };
  }

  if (!isInjectable(watcher)) {
    const message = `Watcher "${watcherName}" has no spec.container.image; pod admitted without the sidecar`;
    return { response: allow(uid, [message]), outcome: 'missing-watcher', watcher: watcherName };
  }
  let plan;
  try {
    plan = planInjection(pod, watcher);
  } catch (error) {
    // A Watcher the CRD schema let through in a shape we cannot use (its container preserves unknown
    // fields): admit the pod without the sidecar and say why, rather than fail the API request.
    const reason = error instanceof Error ? error.message : String(error);
    return { response: allow(uid, [`Watcher "${watcherName}" could not be injected (${reason}); pod admitted without the sidecar`]), outcome: 'failed', watcher: watcherName };
  }
  if (plan.action === 'skip') return { response: allow(uid, plan.warnings), outcome: 'skipped', watcher: watcherName };
  return { response: allowWithPatch(uid, plan.patch, plan.warnings), outcome: 'injected', watcher: watcherName };
}
