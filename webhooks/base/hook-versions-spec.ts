// An AdmissionHook's shadow and canary (spec.function.shadow, spec.function.canary): checked by the same URL
// rules as its function and resolved into where the gateway calls them. Pure: a problem is a message.
import { createHash } from 'node:crypto';
import type { HookCanary, HookFunctionVersion } from '../../api/admission-hook.ts';
import { functionUrlProblem, type FunctionUrlPolicy } from '../../lib/config/function-url-policy.ts';
import type { BudgetLimits } from '../../lib/versions/error-budget.ts';
import { functionUrlOf } from './function-url.ts';

export interface ResolvedVersion {
  url: string;
  fn: HookFunctionVersion;
  /** PEM of fn.caBundle. */
  caBundle: string | undefined;
  /** Names this version's spec: state (divergence, a rollback) is kept until it changes. */
  fingerprint: string;
}

export interface ResolvedCanary extends ResolvedVersion {
  weight: number | undefined;
  namespaces: ReadonlySet<string> | undefined;
  budget: BudgetLimits;
}

export interface HookVersions {
  shadow?: ResolvedVersion;
  canary?: ResolvedCanary;
}

function version(field: string, fn: HookFunctionVersion, policy: FunctionUrlPolicy): ResolvedVersion | string {
  if (typeof fn !== 'object' || fn === null) return `${field}: give a url or a service`;
  if ((fn.url === undefined) === (fn.service === undefined)) return `${field}: give exactly one of url and service`;
  const url = functionUrlOf(fn);
  if (!url) return `${field}: give a url or a service`;
  const problem = functionUrlProblem(url, policy);
  if (problem) return `${field} ${url}: ${problem}`;
  const caBundle = fn.caBundle ? Buffer.from(fn.caBundle, 'base64').toString('utf8') : undefined;
  return { url, fn, caBundle, fingerprint: createHash('sha256').update(JSON.stringify(fn)).digest('hex').slice(0, 12) };
}

/** The hook's versions, or the problem with them (for the Ready condition). */
export function resolveHookVersions(fn: { shadow?: HookFunctionVersion; canary?: HookCanary } | undefined, policy: FunctionUrlPolicy): HookVersions | string {
  const out: HookVersions = {};
  if (fn?.shadow !== undefined) {
    const shadow = version('function.shadow', fn.shadow, policy);
    if (typeof shadow === 'string') return shadow;
    out.shadow = shadow;
  }
  const canary = fn?.canary;
  if (canary !== undefined) {
    const resolved = version('function.canary', canary, policy);
    if (typeof resolved === 'string') return resolved;
    const { weight, namespaces, errorBudget } = canary;
    if (weight === undefined && (namespaces === undefined || namespaces.length === 0)) return 'function.canary: give a weight, namespaces, or both';
    if (weight !== undefined && !(typeof weight === 'number' && weight >= 0 && weight <= 100)) return `function.canary.weight must be a percentage in [0, 100], got ${JSON.stringify(weight)}`;
    const budget = errorBudget as Partial<HookCanary['errorBudget']> | undefined;
    if (!budget || (budget.maxErrors === undefined && budget.ratio === undefined)) return 'function.canary.errorBudget needs maxErrors or ratio';
    if (!(typeof budget.windowSeconds === 'number' && budget.windowSeconds > 0 && budget.windowSeconds <= 86_400)) return 'function.canary.errorBudget.windowSeconds must be in (0, 86400]';
    out.canary = {
      ...resolved,
      weight,
      namespaces: namespaces && namespaces.length > 0 ? new Set(namespaces) : undefined,
      budget: { maxErrors: budget.maxErrors, ratio: budget.ratio, windowMs: budget.windowSeconds * 1000 },
    };
  }
  return out;
}
