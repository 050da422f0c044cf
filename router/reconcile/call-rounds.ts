// The call of one reconcile, with its `requires` rounds: what the primary required last time (the runner
// passes it in) is read first (as the Loop's ServiceAccount), and an answer asking for objects it was not sent
// is not applied: the function is called again with them, up to REQUIRES_LIMITS.calls calls (Crossplane's
// requirements loop). What the settled answer required is returned, for the runner to keep and watch.
// Every request is measured before its body is built: over a cap it is RequestTooLarge and never sent;
// within them it waits for its tenant's share of the request bytes in flight.
import type { KubeObject, ReconcileRequest, RequiredResource, Trigger } from '../../lib/contract/types.ts';
import type { DispatchResult } from './dispatch.ts';
import { buildRequest } from '../../lib/reconcile/build-request.ts';
import { collectRelated, tallyEntry } from './related-objects.ts';
import { cachedJsonSize } from '../../lib/contract/json-size.ts';
import { budgetProblem, DEFAULT_REQUEST_CAPS, type RelatedTally } from '../base/request-caps.ts';
import { tenantOf } from '../base/tenant-weights.ts';
import { fetchRequired, requiresProblem, REQUIRES_LIMITS, sameRequirements, type RequiresProblem, type SettledRequirements } from './required-objects.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import { callCode } from '../base/router-metrics.ts';
import type { ReconcileTrace } from './reconcile-trace.ts';
import type { LoopCaches, LoopFunction, ReconcileDeps } from './reconcile-scope.ts';

/** What the call of one reconcile takes of its Loop's scope (reconcile-scope.ts's ReconcileScope is one). */
export interface CallScope {
  loop: LoopConfig;
  deps: Pick<ReconcileDeps, 'client' | 'discovery' | 'invoke' | 'metrics' | 'recorder' | 'requestCaps' | 'requestBytes'>;
  caches: Pick<LoopCaches, 'owned' | 'related'>;
  function: Pick<LoopFunction, 'versions' | 'invoke'>;
}

/** The reconcile a call belongs to; `required` is what the primary's function required in its last settled answer. */
export interface CallAt {
  key: string;
  primary: KubeObject;
  trigger: Trigger;
  finalizing: boolean;
  url: string;
  required?: readonly RequiredResource[] | undefined;
  traced: Pick<ReconcileTrace, 'startCall' | 'endCall' | 'traceId'>;
}

export type CallOutcome =
  /** `required`: the answer settled (asked for what it was sent), so these are the primary's requirements now. */
  | { kind: 'called'; request: ReconcileRequest; result: DispatchResult; callMs: number; required?: SettledRequirements }
  | ({ kind: 'requires-failed'; request: ReconcileRequest | undefined } & RequiresProblem);

export async function callFunction(scope: CallScope, at: CallAt): Promise<CallOutcome> {
  const { loop, deps } = scope;
  const caps = deps.requestCaps ?? DEFAULT_REQUEST_CAPS;
  const declaredTally: RelatedTally = { objects: 0, bytes: 0 };
  const { related: relatedStores, owned } = scope.caches;
  const collected = relatedStores.length > 0 ? collectRelated(at.primary, relatedStores, caps, declaredTally) : undefined;
  if (collected && !collected.ok) return tooLarge(scope, undefined, collected.message);
  const declared = collected?.related;
  let asked: readonly RequiredResource[] = at.required ?? [];
  let fetched = asked.length > 0 ? await fetchRequired(deps.client, deps.discovery, at.primary, asked, loop.namespace) : ({ ok: true, related: {}, resolved: [] } as const);
  let request: ReconcileRequest | undefined;
  // Every round of one reconcile goes to the same version: the canary's share, or the live function.
  const route = scope.function.versions?.route(at.key);
  const url = route?.url ?? at.url;
  const target = route?.target ?? loop;
  for (let calls = 1; ; calls++) {
    if (!fetched.ok) return { kind: 'requires-failed', request, reason: fetched.reason, message: fetched.message };
    // Required objects count against the same caps as the declared ones, round by round.
    const tally = { ...declaredTally };
    for (const [name, objects] of Object.entries(fetched.related)) {
      const tallied = tallyEntry(name, objects, tally, caps);
      if (!tallied.ok) return tooLarge(scope, request, tallied.message);
    }
    const related = declared || asked.length > 0 ? { ...declared, ...fetched.related } : undefined;
    request = buildRequest({ loop: loop.name, loopNamespace: loop.namespace, primary: at.primary, owned, trigger: at.trigger, finalizing: at.finalizing, ...(related ? { related } : {}) });
    // Measured from the cached objects' sizes: JSON.stringify runs only once the request fits.
    const bytes = requestBytes(request, tally);
    const budget = deps.requestBytes;
    const unfit = budget ? budgetProblem(bytes, budget.capacity) : undefined;
    if (unfit) return tooLarge(scope, request, unfit);
    const release = await budget?.acquire(tenantOf(loop), bytes);
    // Each round is a call span of the reconcile's trace; its headers carry the trace to the function.
    const call = at.traced.startCall(request, url);
    const started = performance.now();
    let result: DispatchResult;
    try {
      result = await (scope.function.invoke ?? deps.invoke)(request, { url, timeoutMs: target.timeoutMs, signingKey: target.signingKey, caBundle: target.caBundle, headers: call.headers });
    } finally {
      release?.();
    }
    const callMs = performance.now() - started;
    scope.function.versions?.called(request, result, route);
    at.traced.endCall(call.span, result, callMs);
    deps.metrics.functionLatency.observe({ loop: loop.id }, callMs / 1000, at.traced.traceId);
    deps.metrics.functionCalls.inc({ loop: loop.id, code: callCode(result.kind, result.status, result.kind === 'failed' ? result.reason : undefined) });
    if (result.kind !== 'ok') return { kind: 'called', request, result, callMs };
    const wanted = result.response.requires ?? [];
    if (sameRequirements(wanted, asked)) return { kind: 'called', request, result, callMs, required: { entries: wanted, resolved: fetched.resolved } };
    deps.recorder?.record(request, result.response);
    // Built only here: most answers require what they were sent, and return above.
    const problem = requiresProblem(wanted, new Set(loop.related.map((r) => r.name)));
    if (problem) return { kind: 'requires-failed', request, ...problem };
    if (calls >= REQUIRES_LIMITS.calls) {
      return { kind: 'requires-failed', request, reason: 'RequiresExceeded', message: `the function asked for different objects on each of ${calls} calls; at most ${REQUIRES_LIMITS.calls} calls per reconcile` };
    }
    asked = wanted;
    fetched = await fetchRequired(deps.client, deps.discovery, at.primary, wanted, loop.namespace);
  }
}

/** A request over a cap: never built or sent; the Loop is RequestTooLarge and the primary gets a Warning. */
function tooLarge(scope: CallScope, request: ReconcileRequest | undefined, message: string): CallOutcome {
  scope.deps.metrics.requestsTooLarge.inc({ loop: scope.loop.id });
  return { kind: 'requires-failed', request, reason: 'RequestTooLarge', message: `${message}; the request was not sent` };
}

/** The JSON bytes of a request: the primary and children from their cached sizes, the related objects as tallied. */
function requestBytes(request: ReconcileRequest, tally: RelatedTally): number {
  let bytes = cachedJsonSize(request.object) + tally.bytes + ENVELOPE_BYTES;
  for (const children of Object.values(request.children)) for (const child of children) bytes += cachedJsonSize(child);
  return bytes;
}

/** apiVersion, kind, loop, ids, trigger, now and the keys: a request's own bytes besides its objects. */
const ENVELOPE_BYTES = 1024;
