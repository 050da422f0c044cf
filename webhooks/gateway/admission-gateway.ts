// POST /admit/<hook> (a ClusterAdmissionHook) and /admit-namespaced/<group> (the group's AdmissionHook of the
// request's namespace): the gateway's hot path. Reads the API server's AdmissionReview, adds the hook's
// context objects from the cache, calls the function (within its tenant's cap of calls in flight), checks its
// answer and replies; a function that is down, slow or answers garbage gets its hook's failurePolicy, a
// metric, and a FunctionAvailable condition.
import { SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import type { KubeObject } from '../../api/meta.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../lib/contract/json-depth.ts';
import { BoundedLabel } from '../../lib/observability/bounded-label.ts';
import { counter, gauge, latencyHistogram, secondsSince } from '../../lib/observability/metrics.ts';
import { contextFromHeaders, recordedTraceId, traceHeaders, tracer } from '../../lib/observability/trace-context.ts';
import { writeFixture } from '../../lib/replay/fixtures.ts';
import type { AdmissionRequest } from '../../lib/contract/admission-types.ts';
import { MalformedReviewError, parseAdmissionReview, reviewResponse } from './admission-review.ts';
import { decideAdmission, type AdmissionDecision, type AdmissionStop } from './admission-decision.ts';
import { DEFAULT_MAX_CONTEXT_BYTES, type ContextLookup } from './context-cache.ts';
import type { CallResult, FunctionCaller } from './function-caller.ts';
import type { HookKeys } from '../base/hook-signing-keys.ts';
import { toFunctionRequest, toReviewResponse, type CallFailure, type Conversion } from './hook-review.ts';
import { HOOK_GROUP_PATH_PREFIX, HOOK_PATH_PREFIX, type ResolvedHook } from '../base/hook-spec.ts';
import { GatewayVersions } from './hook-versions.ts';
import type { ConditionInput } from '../../lib/sdk/conditions.ts';
import type { SecretKeyRef } from '../../api/loop.ts';
import { HookBreaker } from './hook-breaker.ts';
import { DEFAULT_TENANT_MAX_IN_FLIGHT, tenantKey, TenantLimiter } from './tenant-limiter.ts';
import { RequestBounds } from './request-bounds.ts';
import { admissionRecord, type AdmissionHistory } from './admission-history.ts';
import { DEFAULT_MAX_IN_FLIGHT_REQUEST_BYTES } from './request-byte-budget.ts';

/** Tenants labelled by name in the per-tenant metrics; later ones are "other". */
export const MAX_TENANT_LABELS = 100;

export interface GatewayOptions {
  /** ClusterAdmissionHooks by name (namespaced ones in the map are never served by /admit/<name>). */
  hooks: () => ReadonlyMap<string, ResolvedHook>;
  /** Namespaced AdmissionHooks: group id -> namespace -> hook (served-hooks.ts). */
  groups?: () => ReadonlyMap<string, ReadonlyMap<string, ResolvedHook>>;
  /** Calls in flight per tenant (namespace; all cluster hooks are one); over it the hook's failurePolicy applies. */
  tenantMaxInFlight?: number;
  /** Per-hook circuit breaker (--hook-breaker-failures, --hook-breaker-cool-down-seconds); none when omitted. */
  breaker?: { threshold: number; coolDownMs: number };
  contexts: ContextLookup;
  /** Context bytes one request of one hook may carry (--max-context-bytes). */
  maxContextBytes?: number;
  /** Request bytes in flight, divided by tenant (--max-in-flight-request-bytes). */
  maxInFlightRequestBytes?: number;
  caller: FunctionCaller;
  /** The keys a hook's calls are signed with (hook-signing-keys.ts); unsigned when omitted. */
  signingKeys?: (hook: ResolvedHook) => Promise<HookKeys>;
  metrics: Registry;
  /** After each call, by hook identity (<name> or <namespace>/<name>). */
  reportCall: (hook: string, failure: CallFailure | undefined) => void;
  /** A shadow's or canary's condition changed (ShadowDiverged, CanaryRolledBack). */
  reportCondition?: (hook: string, condition: ConditionInput) => void;
  /** A shadow's or canary's own signing keys (its signingSecretRef); unsigned when omitted. */
  versionKeys?: (ref: SecretKeyRef | undefined) => Promise<HookKeys>;
  /** --record: every function call is written there as a test/fixtures admission fixture. */
  recordDir?: string;
  /** Each hook's last admissions, served by the admission history API (admission-history-api.ts). */
  admissions?: AdmissionHistory;
  now?: () => Date;
}

type Review = ReturnType<typeof parseAdmissionReview>;

/** A function call made: the request sent, what came back, and that checked as an answer. */
interface MadeCall {
  request: AdmissionRequest;
  result: CallResult;
  answer: Conversion;
}

export function registerAdmissionGateway(app: FastifyInstance, options: GatewayOptions): void {
  const calls = counter<'hook' | 'outcome'>(options.metrics, 'kubeloop_admission_hook_calls_total', 'Admission requests forwarded to functions, by hook and outcome', ['hook', 'outcome']);
  const failures = counter<'hook' | 'reason' | 'policy'>(
    options.metrics,
    'kubeloop_admission_hook_failures_total',
    'Function calls that gave no usable answer, by hook, reason and the failure policy applied',
    ['hook', 'reason', 'policy'],
  );
  const duration = latencyHistogram<'hook'>(options.metrics, 'kubeloop_admission_hook_duration_seconds', 'Time from the review arriving to the answer, function call included', ['hook']);
  const inFlight = gauge<'tenant'>(options.metrics, 'kubeloop_admission_tenant_calls_in_flight', 'Admission function calls in flight, by tenant (namespace, or cluster)', ['tenant']);
  const throttled = counter<'tenant' | 'policy'>(
    options.metrics,
    'kubeloop_admission_tenant_throttled_total',
    'Admission requests not sent to the function because their tenant had --tenant-max-in-flight calls running, by the failure policy applied',
    ['tenant', 'policy'],
  );
  const tenants = new BoundedLabel(MAX_TENANT_LABELS);
  const limiter = new TenantLimiter(options.tenantMaxInFlight ?? DEFAULT_TENANT_MAX_IN_FLIGHT);
  const bounds = new RequestBounds({
    contexts: options.contexts,
    metrics: options.metrics,
    maxContextBytes: options.maxContextBytes ?? DEFAULT_MAX_CONTEXT_BYTES,
    maxInFlightBytes: options.maxInFlightRequestBytes ?? DEFAULT_MAX_IN_FLIGHT_REQUEST_BYTES,
    tenants: () => tenantCount(options.hooks()),
    ...(options.reportCondition ? { reportCondition: options.reportCondition } : {}),
  });
  const now = options.now ?? (() => new Date());
  const breaker = options.breaker ? new HookBreaker({ ...options.breaker, now: () => now().getTime(), metrics: options.metrics, ...(options.reportCondition ? { reportCondition: options.reportCondition } : {}) }) : undefined;
  const reportCall = (hook: ResolvedHook, failure: CallFailure | undefined) => {
    breaker?.after(hook, failure);
    options.reportCall(hook.id, failure);
  };
  let sequence = 0;
  const versions = new GatewayVersions({
    caller: options.caller,
    metrics: options.metrics,
    logger: app.log,
    ...(options.versionKeys ? { keys: options.versionKeys } : {}),
    ...(options.reportCondition ? { reportCondition: options.reportCondition } : {}),
  });

  const parse = (request: FastifyRequest): ReturnType<typeof parseAdmissionReview> | MalformedReviewError => {
    try {
      return parseAdmissionReview(request.body);
    } catch (error) {
      if (!(error instanceof MalformedReviewError)) throw error;
      return error;
    }
  };
  // Deleted (or not yet ready) while the configuration still names it: never block on a hook that is gone.
  const notServed = (uid: string, what: string) => reviewResponse({ uid, allowed: true, warnings: [`${what} is not served by this gateway (deleted or not ready); admitted without it`] });

  app.post<{ Params: { hook: string } }>(`${HOOK_PATH_PREFIX}:hook`, async (request, reply) => {
    const start = process.hrtime.bigint();
    const review = parse(request);
    if (review instanceof MalformedReviewError) return reply.code(400).send({ statusCode: 400, code: review.code, message: review.message });
    const hook = options.hooks().get(request.params.hook);
    if (!hook || hook.namespace) return notServed(review.uid, `admission hook "${request.params.hook}"`);
    return admit(request, review, hook, start);
  });

  // One entry of the webhook configuration serves a hook in each of several namespaces: the request's picks it.
  app.post<{ Params: { group: string } }>(`${HOOK_GROUP_PATH_PREFIX}:group`, async (request, reply) => {
    const start = process.hrtime.bigint();
    const review = parse(request);
    if (review instanceof MalformedReviewError) return reply.code(400).send({ statusCode: 400, code: review.code, message: review.message });
    const hook = review.namespace ? options.groups?.().get(request.params.group)?.get(review.namespace) : undefined;
    if (!hook) return notServed(review.uid, `no AdmissionHook of webhook group ${request.params.group} in namespace "${review.namespace ?? ''}"`);
    return admit(request, review, hook, start);
  });

  async function admit(request: FastifyRequest, review: Review, hook: ResolvedHook, start: bigint) {
    const tenant = tenantKey(hook);
    if (!limiter.tryAcquire(tenant)) {
      const failure: CallFailure = { kind: 'Throttled', message: `was not called: tenant "${tenant}" has ${limiter.maxInFlight} admission calls in flight, the gateway's cap per tenant` };
      return carryOut(request, review, hook, decideAdmission(review.uid, hook, { stage: 'tenant-cap', failure }), start);
    }
    // After the tenant's slot is taken, so a half-open probe is always followed by its call.
    const shortCircuit = breaker?.before(hook);
    if (shortCircuit) {
      limiter.release(tenant);
      return carryOut(request, review, hook, decideAdmission(review.uid, hook, { stage: 'breaker', failure: shortCircuit }), start);
    }
    const label = tenants.of(tenant);
    inFlight.inc({ tenant: label });
    try {
      return await traced(request, review, hook, start);
    } finally {
      inFlight.dec({ tenant: label });
      limiter.release(tenant);
    }
  }

  /** The admission's span around the bounds and the call; the decision is carried out before it ends. */
  async function traced(request: FastifyRequest, review: Review, hook: ResolvedHook, start: bigint) {
    // The API server's span (its webhook call carries traceparent when its tracing is on) is the parent.
    const parent = contextFromHeaders(request.headers);
    // No attributes at the start (the ratio sampler decides on the trace id alone): an admission that is not
    // recorded (all with tracing off, most at a sampling ratio) builds none, as the router's reconciles.
    const span = tracer().startSpan(`admit ${hook.id}`, { kind: SpanKind.SERVER }, parent);
    if (span.isRecording()) span.setAttributes(admissionAttributes(review));
    const { stop, made } = await boundedCall(request, review, hook, trace.setSpan(parent, span));
    const decision = decideAdmission(review.uid, hook, stop);
    if (decision.stage === 'called') span.setAttribute('kubeloop.admission.outcome', decision.outcome);
    if (decision.failure) span.setStatus({ code: SpanStatusCode.ERROR, message: decision.failure.message });
    try {
      return carryOut(request, review, hook, decision, start, made, span);
    } finally {
      span.end();
    }
  }

  /** The request's bounds (context bytes, the byte budget), then the function called within them. */
  async function boundedCall(request: FastifyRequest, review: Review, hook: ResolvedHook, traced: Context): Promise<{ stop: AdmissionStop; made?: MadeCall }> {
    const object = (review.object ?? review.oldObject) as KubeObject | undefined;
    const lookupSpan = tracer().startSpan('context lookup', {}, traced);
    if (lookupSpan.isRecording()) lookupSpan.setAttribute('kubeloop.context.entries', hook.context.length);
    const prepared = bounds.prepare(hook, tenantKey(hook), object, review.namespace, Number(request.headers['content-length'] ?? 0) || 0);
    lookupSpan.end();
    if (!prepared.ok) return { stop: { stage: 'bounds', failure: prepared.failure } };
    try {
      const made = await callFunction(review, hook, prepared.context, traced);
      return { stop: { stage: 'called', answer: made.answer }, made };
    } finally {
      prepared.release();
    }
  }

  /** Calls the live function, or the canary chosen for this request and charged with its answer; offers the shadow. */
  async function callFunction(review: Review, hook: ResolvedHook, contexts: Record<string, KubeObject | null>, traced: Context): Promise<MadeCall> {
    const functionRequest = toFunctionRequest(review, hook, contexts, now());
    // A canary's share goes to the canary, with its own keys and CA bundle; the rest to the live function.
    const choice = versions.route(hook, review);
    const canary = choice?.canary;
    const signing = canary ? await versions.keys(canary.fn.signingSecretRef) : options.signingKeys ? await options.signingKeys(hook) : ({ ok: true, keys: undefined } as const);
    const url = canary?.url ?? hook.functionUrl;
    const callSpan = tracer().startSpan(`call ${hook.id}`, { kind: SpanKind.CLIENT }, traced);
    if (callSpan.isRecording()) callSpan.setAttribute('url.full', url);
    // The runtime refuses what nests deeper than it takes: say so without the round trip (a denial when validating).
    const result: CallResult = nestsDeeperThan(functionRequest)
      ? { ok: false, failure: { kind: 'Refused', message: `was not called: the request nests deeper than the ${MAX_JSON_DEPTH} levels functions take` } }
      : signing.ok
        ? await options.caller.call(url, functionRequest, {
            timeoutMs: hook.functionTimeoutMs,
            signingKeys: signing.keys,
            caBundle: canary ? canary.caBundle : caBundleOf(hook),
            headers: traceHeaders(trace.setSpan(traced, callSpan)),
          })
        : { ok: false, failure: { kind: 'Unreachable', message: `was not called: ${signing.message}` } };
    if (!result.ok) callSpan.setStatus({ code: SpanStatusCode.ERROR, message: result.failure.message });
    callSpan.end();
    const answer = result.ok ? toReviewResponse(result.reply, hook, functionRequest) : result;
    choice?.answered(!answer.ok);
    // After the live answer, never awaited: the shadow's answer is compared, never enforced.
    versions.shadow(hook, functionRequest, result);
    return { request: functionRequest, result, answer };
  }

  /** The one carry-out of a decision: the metrics, the log line, the hook's breaker and status, the recorded fixture. */
  function carryOut(request: FastifyRequest, review: Review, hook: ResolvedHook, decision: AdmissionDecision, start: bigint, made?: MadeCall, span?: Span) {
    const { failure } = decision;
    const policy = hook.spec.failurePolicy;
    // Read before the span ends: a span has a trace id to link only while it records.
    const traceId = span ? recordedTraceId(span) : undefined;
    if (decision.stage === 'tenant-cap') throttled.inc({ tenant: tenants.of(tenantKey(hook)), policy });
    if (failure) failures.inc({ hook: hook.id, reason: failure.kind, policy });
    calls.inc({ hook: hook.id, outcome: decision.outcome });
    if (decision.observesDuration) duration.observe({ hook: hook.id }, secondsSince(start));
    if (failure && decision.stage === 'tenant-cap') {
      request.log.warn({ hook: hook.id, tenant: tenantKey(hook), uid: review.uid, policy }, 'admission call over the tenant cap');
    } else if (failure && decision.stage === 'bounds') {
      request.log.warn({ hook: hook.id, uid: review.uid, reason: failure.kind, policy, message: failure.message }, 'admission request over a gateway bound');
    } else if (failure && decision.stage === 'called') {
      const body = made && !made.result.ok && made.result.detail ? { body: made.result.detail.slice(0, 300) } : {};
      request.log.warn({ hook: hook.id, uid: review.uid, reason: failure.kind, policy, message: failure.message, ...body, ...(traceId ? { traceId } : {}) }, 'admission function failed');
    }
    if (decision.reportsCall) reportCall(hook, failure);
    if (!failure && made?.result.ok && options.recordDir) record(options.recordDir, review, hook, made.request, made.result.reply);
    // Kept in the hook's admission history, with its trace when recorded.
    options.admissions?.add(hook.id, admissionRecord(review, decision.response, decision.outcome, Number(process.hrtime.bigint() - start) / 1e6, now(), traceId));
    return reviewResponse(decision.response);
  }

  /** --record: the call as a test/fixtures admission fixture. */
  function record(dir: string, review: Review, hook: ResolvedHook, functionRequest: AdmissionRequest, reply: unknown): void {
    sequence += 1;
    writeFixture(dir, `${hook.namespace ? `${hook.namespace}.` : ''}${hook.name}-${Date.now()}-${String(sequence).padStart(5, '0')}`, {
      description: `${hook.id}: ${review.operation} of ${review.kind.kind} ${review.namespace ? `${review.namespace}/` : ''}${review.name ?? ''} (recorded ${functionRequest.now})`,
      request: functionRequest,
      response: reply as never,
    });
  }
}

/** The cluster hooks are one tenant, each namespace with a hook another; counted once per published table. */
const tenantCounts = new WeakMap<object, number>();
function tenantCount(hooks: ReadonlyMap<string, ResolvedHook>): number {
  let count = tenantCounts.get(hooks);
  if (count === undefined) tenantCounts.set(hooks, (count = new Set([...hooks.values()].map(tenantKey)).size));
  return count;
}

function admissionAttributes(review: Review): Record<string, string> {
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
