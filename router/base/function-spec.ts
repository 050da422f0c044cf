// How a Loop names a function version (spec.function, and its shadow and canary): the address (url or
// ref), timeout, concurrency, signing Secret and CA bundle, validated alike for all three into FunctionTarget.
import { createHash } from 'node:crypto';
import type { CanaryFunction, FunctionVersion, SecretKeyRef } from '../../api/loop.ts';
import { functionUrlProblem, type FunctionUrlPolicy } from '../../lib/config/function-url-policy.ts';
import type { SigningKeys } from '../../lib/signing/webhook-signature.ts';
import { parseFunctionRef, type FunctionRefConfig } from './function-ref.ts';

export class LoopSpecError extends Error {
  constructor(
    readonly loop: string,
    readonly field: string,
    problem: string,
  ) {
    super(`Loop ${loop}: ${field} ${problem}`);
    this.name = 'LoopSpecError';
  }
}

/**
 * Caps (also in the CRD schema): a function is pure and answers in milliseconds, and every call in flight
 * holds a socket and up to one reply's memory, so a Loop cannot ask for a thousand at once or an hour each.
 */
export const MAX_TIMEOUT_SECONDS = 60;
export const MAX_CONCURRENCY = 64;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

/** One version of a Loop's function, validated: where it is, how long it may take, how calls are signed. */
export interface FunctionTarget {
  /** The literal URL; undefined when the version is named by `ref` (resolved while the Loop runs). */
  url: string | undefined;
  ref: FunctionRefConfig | undefined;
  timeoutMs: number;
  maxConcurrency: number;
  signingSecretRef: SecretKeyRef | undefined;
  /** PEM, decoded from caBundle. */
  caBundle: string | undefined;
  /** The key(s) read from signingSecretRef before the Loop starts, replaced when the Secret is rotated. */
  signingKey?: SigningKeys;
}

/** A validated canary: its version, its share of keys and its error budget. */
export interface CanaryConfig extends FunctionTarget {
  /** Percent of the keys, 0..100. */
  weight: number;
  budget: { maxErrors: number | undefined; ratio: number | undefined; windowMs: number };
  /** Names this canary spec: a rollback holds until the canary spec changes (another fingerprint). */
  fingerprint: string;
  /** Set by the Loop controller when this very canary spec was rolled back before (a restart keeps it so). */
  rolledBackAtStart?: boolean;
}

export function positive(loop: string, field: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > max) {
    throw new LoopSpecError(loop, field, `must be a number in (0, ${max}], got ${JSON.stringify(value)}`);
  }
  return value;
}

function secretKeyRef(loop: string, field: string, value: unknown): SecretKeyRef | undefined {
  if (value === undefined) return undefined;
  const ref = value as Partial<Record<keyof SecretKeyRef, unknown>> | null;
  if (!ref || typeof ref !== 'object') throw new LoopSpecError(loop, field, 'must be { name, namespace, key }');
  if (typeof ref.name !== 'string' || !/^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/.test(ref.name) || ref.name.length > 253) {
    throw new LoopSpecError(loop, `${field}.name`, 'must be a Secret name');
  }
  if (typeof ref.namespace !== 'string' || !DNS_LABEL.test(ref.namespace)) throw new LoopSpecError(loop, `${field}.namespace`, 'must be a namespace name');
  if (typeof ref.key !== 'string' || !SECRET_KEY.test(ref.key) || ref.key.length > 253) throw new LoopSpecError(loop, `${field}.key`, 'must be a Secret data key');
  return { name: ref.name, namespace: ref.namespace, key: ref.key };
}

/** `url` is the literal URL; with a ref the URL is resolved later and the bundle applies when it is https. */
function caBundle(loop: string, field: string, value: unknown, url: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (url !== undefined && !url.startsWith('https:')) throw new LoopSpecError(loop, field, 'is only used with an https url');
  const pem = typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : '';
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new LoopSpecError(loop, field, 'must be base64 of PEM certificates');
  return pem;
}

function checkFunctionUrl(loop: string, field: string, raw: unknown, urlPolicy: FunctionUrlPolicy): string {
  if (typeof raw !== 'string') throw new LoopSpecError(loop, field, 'must be a string');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new LoopSpecError(loop, field, `"${raw}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new LoopSpecError(loop, field, 'must be http or https');
  const urlProblem = functionUrlProblem(raw, urlPolicy);
  if (urlProblem) throw new LoopSpecError(loop, field, `"${raw}": ${urlProblem}`);
  return raw;
}

/** Validates one version at `field` (spec.function, spec.function.shadow, spec.function.canary). */
export function parseFunctionTarget(loop: string, field: string, value: unknown, urlPolicy: FunctionUrlPolicy, defaults: { maxConcurrency: number }): FunctionTarget {
  const fn = value as Partial<FunctionVersion> | undefined;
  if (!fn || typeof fn !== 'object') throw new LoopSpecError(loop, field, 'is required ({ url } or { ref })');
  if ((fn.url === undefined) === (fn.ref === undefined)) throw new LoopSpecError(loop, field, 'must have exactly one of url and ref');
  let ref: FunctionRefConfig | undefined;
  if (fn.ref !== undefined) {
    const parsed = parseFunctionRef(fn.ref);
    // parseFunctionRef names the Loop's own function; a shadow's or canary's problem names its field.
    if ('problem' in parsed) throw new LoopSpecError(loop, parsed.field.replace(/^spec\.function/, field), parsed.problem);
    ref = parsed;
  }
  const url = fn.url === undefined ? undefined : checkFunctionUrl(loop, `${field}.url`, fn.url, urlPolicy);
  return {
    url,
    ref,
    timeoutMs: positive(loop, `${field}.timeoutSeconds`, fn.timeoutSeconds, 10, MAX_TIMEOUT_SECONDS) * 1000,
    maxConcurrency: Math.floor(positive(loop, `${field}.maxConcurrency`, fn.maxConcurrency, defaults.maxConcurrency, MAX_CONCURRENCY)),
    signingSecretRef: secretKeyRef(loop, `${field}.signingSecretRef`, fn.signingSecretRef),
    caBundle: caBundle(loop, `${field}.caBundle`, fn.caBundle, fn.url),
  };
}

/** A shadow's calls in flight at once unless it says otherwise: beyond them calls are dropped, not queued. */
export const DEFAULT_SHADOW_CONCURRENCY = 4;

export function parseShadow(loop: string, value: unknown, urlPolicy: FunctionUrlPolicy): FunctionTarget | undefined {
  if (value === undefined) return undefined;
  return parseFunctionTarget(loop, 'spec.function.shadow', value, urlPolicy, { maxConcurrency: DEFAULT_SHADOW_CONCURRENCY });
}

export function parseCanary(loop: string, value: unknown, urlPolicy: FunctionUrlPolicy, liveConcurrency: number): CanaryConfig | undefined {
  if (value === undefined) return undefined;
  const field = 'spec.function.canary';
  const target = parseFunctionTarget(loop, field, value, urlPolicy, { maxConcurrency: liveConcurrency });
  const canary = value as Partial<CanaryFunction>;
  const { weight } = canary;
  if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0 || weight > 100) {
    throw new LoopSpecError(loop, `${field}.weight`, `must be a percentage in [0, 100], got ${JSON.stringify(weight)}`);
  }
  const budget = canary.errorBudget as Partial<CanaryFunction['errorBudget']> | undefined;
  if (!budget || typeof budget !== 'object') throw new LoopSpecError(loop, `${field}.errorBudget`, 'is required ({ maxErrors or ratio, windowSeconds })');
  const { maxErrors, ratio } = budget;
  if (maxErrors === undefined && ratio === undefined) throw new LoopSpecError(loop, `${field}.errorBudget`, 'needs maxErrors or ratio');
  if (maxErrors !== undefined && (typeof maxErrors !== 'number' || !Number.isInteger(maxErrors) || maxErrors < 0)) {
    throw new LoopSpecError(loop, `${field}.errorBudget.maxErrors`, `must be a whole number >= 0, got ${JSON.stringify(maxErrors)}`);
  }
  if (ratio !== undefined && (typeof ratio !== 'number' || !(ratio >= 0 && ratio < 1))) {
    throw new LoopSpecError(loop, `${field}.errorBudget.ratio`, `must be a number in [0, 1), got ${JSON.stringify(ratio)}`);
  }
  const windowMs = positive(loop, `${field}.errorBudget.windowSeconds`, budget.windowSeconds ?? Number.NaN, 0, 86_400) * 1000;
  return { ...target, weight, budget: { maxErrors, ratio, windowMs }, fingerprint: createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 12) };
}
