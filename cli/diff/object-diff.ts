// The pure half of `kubeloop diff`: which actions of two answers for one object differ (per target, by
// effect, as replay compares them), how an object after a dry-run differs from the live one, the summary
// of a run and its exit code (0 no change, 1 changes, 2 errors: a CI gate).
import type { Action, ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';
import { compareResponses, orderingGroup, type Difference } from '../../lib/replay/compare-responses.ts';
import { jsonChanges, type JsonChange } from '../../lib/replay/json-diff.ts';

/** The actions of both versions on one target (an object, "status" or "event") when they differ. */
export interface TargetDiff {
  /** orderingGroup(): "<apiVersion> <Kind> <namespace>/<name>", "status" or "event". */
  target: string;
  baseline: Action[];
  candidate: Action[];
  differences: Difference[];
}

export interface ResponseDiff {
  /** Per target, only those whose actions differ, sorted by target. */
  targets: TargetDiff[];
  /** Differences outside the actions: requeueAfterSeconds, finalized, error. */
  response: Difference[];
}

/** A replay difference (expected = recorded, actual = reply) in the words of a diff: the running and the new version. */
export function asVersions(difference: Difference): Difference {
  const message = difference.message
    .replace(/^missing \(expected (.*)\)$/s, 'only the running version: $1')
    .replace(/^missing (.*)$/s, 'only the running version: $1')
    .replace(/^unexpected (.*)$/s, 'only the new version: $1')
    .replace(/^expected (.*?), got (.*)$/s, 'running version $1, new version $2');
  return { path: difference.path, message };
}

function onlyActions(response: ReconcileResponse, actions: Action[]): ReconcileResponse {
  return { apiVersion: response.apiVersion, kind: response.kind, actions };
}

function byTarget(actions: readonly Action[]): Map<string, Action[]> {
  const groups = new Map<string, Action[]>();
  for (const action of actions) {
    const key = orderingGroup(action);
    groups.set(key, [...(groups.get(key) ?? []), action]);
  }
  return groups;
}

/** What differs between the running version's answer (baseline) and the new one (candidate) for one request. */
export function diffResponses(request: ReconcileRequest, baseline: ReconcileResponse, candidate: ReconcileResponse): ResponseDiff {
  const { actions: baselineActions, ...baselineRest } = baseline;
  const { actions: candidateActions, ...candidateRest } = candidate;
  const response = compareResponses({ ...baselineRest, actions: [] }, { ...candidateRest, actions: [] }).map(asVersions);
  const before = byTarget(baselineActions);
  const after = byTarget(candidateActions);
  const targets: TargetDiff[] = [];
  for (const target of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const b = before.get(target) ?? [];
    const c = after.get(target) ?? [];
    const differences = compareResponses(onlyActions(baseline, b), onlyActions(candidate, c), { request }).map(asVersions);
    if (differences.length > 0) targets.push({ target, baseline: b, candidate: c, differences });
  }
  return { targets, response };
}

/** Fields every write changes without meaning anything to a reader of the diff. */
const NOISE = [/^\/metadata\/managedFields(\/|$)/, /^\/metadata\/resourceVersion$/];

/** How the object after the new version's actions (server dry-run) differs from the live one. */
export function changesAgainstLive(live: unknown, after: unknown): JsonChange[] {
  return jsonChanges(live ?? {}, after ?? {}).filter((change) => !NOISE.some((pattern) => pattern.test(change.path)));
}

export type DiffOutcome = 'unchanged' | 'changed' | 'error' | 'skipped';

export interface DiffSummary {
  objects: number;
  unchanged: number;
  changed: number;
  errors: number;
  /** Primaries the router would not call the function for (being deleted and not ours to finalize). */
  skipped: number;
}

export function summarise(outcomes: readonly DiffOutcome[]): DiffSummary {
  const count = (outcome: DiffOutcome) => outcomes.filter((o) => o === outcome).length;
  return { objects: outcomes.length, unchanged: count('unchanged'), changed: count('changed'), errors: count('error'), skipped: count('skipped') };
}

/** The CI gate: any error wins (the answer is incomplete), then any change. */
export function exitCodeOf(summary: DiffSummary): 0 | 1 | 2 {
  if (summary.errors > 0) return 2;
  return summary.changed > 0 ? 1 : 0;
}

/** The summary as a fixed-width table. */
export function summaryTable(summary: DiffSummary, extra: Record<string, string | number> = {}): string {
  const columns: Array<[string, string | number]> = [
    ['OBJECTS', summary.objects],
    ['CHANGED', summary.changed],
    ['UNCHANGED', summary.unchanged],
    ['ERRORS', summary.errors],
    ['SKIPPED', summary.skipped],
    ...Object.entries(extra),
  ];
  const widths = columns.map(([head, value]) => Math.max(head.length, String(value).length));
  const row = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return `${row(columns.map(([head]) => head))}\n${row(columns.map(([, value]) => String(value)))}`;
}

/** One change as a line: "~ /path: a -> b", "+ /path: b", "- /path: a". */
export function formatChange(change: JsonChange): string {
  const show = (value: unknown) => JSON.stringify(value) ?? 'undefined';
  if (!('before' in change)) return `+ ${change.path}: ${show(change.after)}`;
  if (!('after' in change)) return `- ${change.path}: ${show(change.before)}`;
  return `~ ${change.path}: ${show(change.before)} -> ${show(change.after)}`;
}
