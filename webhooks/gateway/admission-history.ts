// The gateway's admission recorder: for each hook, its last N admissions (operation, object, requester, the
// answer: allowed, denied, patched or how the function failed, the patch's operations, duration, trace id), as
// the router's flight recorder keeps reconciles. Memory is bounded: N entries per hook, hooks in all (the least
// recently admitting hook goes first), and each entry's message, warnings and patch lines are cut short.
import type { AdmissionRequest, AdmissionResponse } from './admission-review.ts';

export interface AdmissionRecord {
  /** RFC 3339, when the review arrived. */
  startedAt: string;
  uid: string;
  operation: string;
  /** The resource as the API server named it (group "" for the core group). */
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  kind: string;
  namespace?: string;
  name?: string;
  /** Who made the request (userInfo.username). */
  user?: string;
  dryRun?: boolean;
  /** allowed, denied, patched, or how the function failed (Timeout, Unreachable, Throttled, CircuitOpen ...). */
  outcome: string;
  /** What the API server was told. */
  allowed: boolean;
  code?: number;
  message?: string;
  warnings?: string[];
  /** "add /metadata/labels/team": the patch's operations (the first MAX_PATCH_LINES). */
  patch?: string[];
  /** Patch operations beyond MAX_PATCH_LINES. */
  patchOmitted?: number;
  ms: number;
  /** Recorded (sampled) traces only. */
  traceId?: string;
}

export interface AdmissionHistoryLimits {
  /** Admissions kept per hook; 0 turns the recorder off. */
  perHook: number;
  /** Hooks kept in all. */
  hooks: number;
}

export const DEFAULT_ADMISSION_HISTORY_LIMITS = { perHook: 50, hooks: 500 } satisfies AdmissionHistoryLimits;
export const MAX_PATCH_LINES = 10;
const MAX_TEXT = 500;
const MAX_WARNINGS = 3;

const cut = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}...` : text);

/** Pure: a JSON patch (base64, as the review response carries it) as one line per operation. */
export function patchLines(base64: string | undefined): { lines: string[]; omitted: number } | undefined {
  if (!base64) return undefined;
  let ops: unknown;
  try {
    ops = JSON.parse(Buffer.from(base64, 'base64').toString('utf8'));
  } catch {
    return { lines: ['(not a JSON patch)'], omitted: 0 };
  }
  if (!Array.isArray(ops)) return { lines: ['(not a JSON patch)'], omitted: 0 };
  const lines = ops.slice(0, MAX_PATCH_LINES).map((op: { op?: unknown; path?: unknown }) => cut(`${String(op?.op)} ${String(op?.path)}`));
  return { lines, omitted: Math.max(0, ops.length - MAX_PATCH_LINES) };
}

/** Pure: what one admission leaves in the history. */
export function admissionRecord(review: AdmissionRequest, response: AdmissionResponse, outcome: string, ms: number, at: Date, traceId?: string): AdmissionRecord {
  const patch = patchLines(response.patch);
  const message = response.status?.message;
  return {
    startedAt: new Date(at.getTime() - Math.round(ms)).toISOString(),
    uid: review.uid,
    operation: review.operation,
    resource: { group: review.resource.group, version: review.resource.version, resource: review.resource.resource },
    ...(review.subResource ? { subResource: review.subResource } : {}),
    kind: review.kind.kind,
    ...(review.namespace ? { namespace: review.namespace } : {}),
    ...(review.name ? { name: review.name } : {}),
    ...(review.userInfo?.username ? { user: review.userInfo.username } : {}),
    ...(review.dryRun ? { dryRun: true } : {}),
    outcome,
    allowed: response.allowed,
    ...(response.status?.code ? { code: response.status.code } : {}),
    ...(message ? { message: cut(message) } : {}),
    ...(response.warnings?.length ? { warnings: response.warnings.slice(0, MAX_WARNINGS).map(cut) } : {}),
    ...(patch ? { patch: patch.lines, ...(patch.omitted > 0 ? { patchOmitted: patch.omitted } : {}) } : {}),
    ms: Math.round(ms * 10) / 10,
    ...(traceId ? { traceId } : {}),
  };
}

/** The last admissions of each hook, keyed by the hook's identity (<name> or <namespace>/<name>). */
export class AdmissionHistory {
  // A Map keeps insertion order: re-inserting on each admission makes the first key the least recently admitting hook.
  private readonly byHook = new Map<string, AdmissionRecord[]>();

  constructor(readonly limits: AdmissionHistoryLimits = DEFAULT_ADMISSION_HISTORY_LIMITS) {}

  add(hook: string, record: AdmissionRecord): void {
    if (this.limits.perHook <= 0) return;
    const entries = this.byHook.get(hook) ?? [];
    this.byHook.delete(hook);
    entries.push(record);
    if (entries.length > this.limits.perHook) entries.splice(0, entries.length - this.limits.perHook);
    this.byHook.set(hook, entries);
    while (this.byHook.size > this.limits.hooks) {
      const oldest = this.byHook.keys().next().value;
      if (oldest === undefined) break;
      this.byHook.delete(oldest);
    }
  }

  /** Oldest first; empty for a hook that admitted nothing kept. */
  history(hook: string): readonly AdmissionRecord[] {
    return this.byHook.get(hook) ?? [];
  }

  /** A hook that is gone takes its history with it. */
  forget(hook: string): void {
    this.byHook.delete(hook);
  }

  get size(): number {
    return this.byHook.size;
  }
}
