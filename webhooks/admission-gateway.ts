// POST /admit/<hook>: the gateway's hot path. Reads the API server's AdmissionReview, adds the hook's
// context objects from the cache, calls the function, checks its answer and replies; a function that is
// down, slow or answers garbage gets its hook's failurePolicy, a metric, and a FunctionAvailable condition.
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { KubeObject } from '../api/meta.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../lib/contract/json-depth.ts';
import { counter, latencyHistogram, secondsSince } from '../lib/observability/metrics.ts';
import { contextFromHeaders, recordedTraceId, traceHeaders, tracer } from '../lib/observability/trace-context.ts';
import { writeFixture } from '../lib/replay/fixtures.ts';
import { MalformedReviewError, parseAdmissionReview, reviewResponse, type AdmissionResponse as ReviewResponse } from './admission-review.ts';
import type { ContextLookup } from './context-objects.ts';
import type { CallResult, FunctionCaller } from './function-caller.ts';
import type { HookKeys } from './hook-signing-keys.ts';
import { applyFailurePolicy, toFunctionRequest, toReviewResponse, type CallFailure } from './hook-review.ts';
import { HOOK_PATH_PREFIX, type ResolvedHook } from './hook-spec.ts';
import { GatewayVersions } from './hook-versions.ts';
import type { ConditionInput } from '../lib/sdk/conditions.ts';
import type { SecretKeyRef } from '../api/loop.ts';

export interface GatewayOptions {
  hooks: () => ReadonlyMap<string, ResolvedHook>;
  contexts: ContextLookup;
  caller: FunctionCaller;
  /** The keys a hook's calls are signed with (hook-signing-keys.ts); unsigned when omitted. */
  signingKeys?: (hook: ResolvedHook) => Promise<HookKeys>;
  metrics: Registry;
  reportCall: (hook: string, failure: CallFailure | undefined) => void;
  /** A shadow's or canary's condition changed (ShadowDiverged, CanaryRolledBack). */
  reportCondition?: (hook: string, condition: ConditionInput) => void;
  /** A shadow's or canary's own signing keys (its signingSecretRef); unsigned when omitted. */
  versionKeys?: (ref: SecretKeyRef | undefined) => Promise<HookKeys>;
  /** --record: every function call is written there as a test/fixtures admission fixture. */
  recordDir?: string;
  now?: () => Date;
}

/** Bounded metric label: allowed, denied, patched, or how the function failed. */
type GatewayOutcome = 'allowed' | 'denied' | 'patched' | CallFailure['kind'];

export function registerAdmissionGateway(app: FastifyInstance, options: GatewayOptions): void {
  const calls = counter<'hook' | 'outcome'>(options.metrics, 'kubeloop_admission_hook_calls_total', 'Admission requests forwarded to functions, by hook and outcome', ['hook', 'outcome']);
  const failures = counter<'hook' | 'reason' | 'policy'>(
    options.metrics,
    'kubeloop_admission_hook_failures_total',
    'Function calls that gave no usable answer, by hook, reason and the failure policy applied',
    ['hook', 'reason', 'policy'],
  );
  const duration = latencyHistogram<'hook'>(options.metrics, 'kubeloop_admission_hook_duration_seconds', 'Time from the review arriving to the answer, function call included', ['hook']);
  const now = options.now ?? (() => new Date());
  let sequence = 0;
  const versions = new GatewayVersions({
    caller: options.caller,
    metrics: options.metrics,
    logger: app.log,
    ...(options.versionKeys ? { keys: options.versionKeys } : {}),
    ...(options.reportCondition ? { reportCondition: options.reportCondition } : {}),
  });

  app.post<{ Params: { hook: string } }>(`${HOOK_PATH_PREFIX}:hook`, async (request, reply) => {
    const start = process.hrtime.bigint();
    let review;
    try {
      review = parseAdmissionReview(request.body);
    } catch (error) {
      if (!(error instanceof MalformedReviewError)) throw error;
      return reply.code(400).send({ statusCode: 400, code: error.code, message: error.message });
    }
    const hook = options.hooks().get(request.params.hook);
    if (!hook) {
      // Deleted (or not yet ready) while the configuration still names it: never block on a hook that is gone.
      return reviewResponse({ uid: review.uid, allowed: true, warnings: [`admission hook "${request.params.hook}" is not served by this gateway (deleted or not ready); admitted without it`] });
    }
    const object = (review.object ?? review.oldObject) as KubeObject | undefined;
    // The API server's span (its webhook call carries traceparent when its tracing is on) is the parent.
    const parent = contextFromHeaders(request.headers);
    const span = tracer().startSpan(`admit ${hook.name}`, { kind: SpanKind.SERVER, attributes: admissionAttributes(review) }, parent);
    const traced = trace.setSpan(parent, span);
    const lookupSpan = tracer().startSpan('context lookup', { attributes: { 'kubeloop.context.entries': hook.context.length } }, traced);
    const contexts = options.contexts.lookup(hook.context, object, review.namespace);
    lookupSpan.end();
    const functionRequest = toFunctionRequest(review, hook, contexts, now());
    // A canary's share goes to the canary, with its own keys and CA bundle; the rest to the live function.
    const canary = versions.route(hook, review);
    const signing = canary ? await versions.keys(canary.fn.signingSecretRef) : options.signingKeys ? await options.signingKeys(hook) : ({ ok: true, keys: undefined } as const);
    const url = canary?.url ?? hook.functionUrl;
    const callSpan = tracer().startSpan(`call ${hook.name}`, { kind: SpanKind.CLIENT, attributes: { 'url.full': url } }, traced);
    // The runtime refuses what nests deeper than it takes: say so without the round trip (a denial when validating).
    const called: CallResult = nestsDeeperThan(functionRequest)
      ? { ok: false, failure: { kind: 'Refused', message: `was not called: the request nests deeper than the ${MAX_JSON_DEPTH} levels functions take` } }
      : signing.ok
        ? await options.caller.call(url, functionRequest, {
            timeoutMs: hook.functionTimeoutMs,
            signingKeys: signing.keys,
            caBundle: canary ? canary.caBundle : caBundleOf(hook),
            headers: traceHeaders(trace.setSpan(traced, callSpan)),
          })
        : { ok: false, failure: { kind: 'Unreachable', message: `was not called: ${signing.message}` } };
    if (!called.ok) callSpan.setStatus({ code: SpanStatusCode.ERROR, message: called.failure.message });
    callSpan.end();
    const converted = called.ok ? toReviewResponse(called.reply, hook, functionRequest) : called;
    if (canary) versions.canaryAnswered(hook, !converted.ok);
    // After the live answer, never awaited: the shadow's answer is compared, never enforced.
    versions.shadow(hook, functionRequest, called);
    let response: ReviewResponse;
    let outcome: GatewayOutcome;
    if (converted.ok) {
      response = converted.response;
      outcome = !response.allowed ? 'denied' : response.patch ? 'patched' : 'allowed';
      options.reportCall(hook.name, undefined);
      if (options.recordDir && called.ok) {
        sequence += 1;
        writeFixture(options.recordDir, `${hook.name}-${Date.now()}-${String(sequence).padStart(5, '0')}`, {
          description: `${hook.name}: ${review.operation} of ${review.kind.kind} ${review.namespace ? `${review.namespace}/` : ''}${review.name ?? ''} (recorded ${functionRequest.now})`,
          request: functionRequest,
          response: called.reply as never,
        });
      }
    } else {
      outcome = converted.failure.kind;
      response = applyFailurePolicy(review.uid, hook, converted.failure);
      failures.inc({ hook: hook.name, reason: converted.failure.kind, policy: hook.spec.failurePolicy });
      const traceId = recordedTraceId(span);
      const body = !called.ok && called.detail ? { body: called.detail.slice(0, 300) } : {};
      request.log.warn(
        { hook: hook.name, uid: review.uid, reason: converted.failure.kind, policy: hook.spec.failurePolicy, message: converted.failure.message, ...body, ...(traceId ? { traceId } : {}) },
        'admission function failed',
      );
      options.reportCall(hook.name, converted.failure);
    }
    calls.inc({ hook: hook.name, outcome });
    duration.observe({ hook: hook.name }, secondsSince(start));
    span.setAttribute('kubeloop.admission.outcome', outcome);
    if (!converted.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: converted.failure.message });
    span.end();
    return reviewResponse(response);
  });
}

function admissionAttributes(review: ReturnType<typeof parseAdmissionReview>): Record<string, string> {
  return {
    'k8s.admission.uid': review.uid,
    'k8s.admission.operation': review.operation,
    'k8s.kind': review.kind.kind,
    'k8s.object': `${review.namespace ? `${review.namespace}/` : ''}${review.name ?? ''}`,
  };
}

/** The hook's caBundle as PEM (the CRD checks it is base64); undefined for plain http. */
function caBundleOf(hook: ResolvedHook): string | undefined {
  const encoded = hook.spec.function?.caBundle;
  return encoded ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
}
