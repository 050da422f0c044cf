// Compares an expected ReconcileResponse with an actual one under the contract's ordering rules: the router
// applies actions in order, so order matters among actions on the same target and among status actions;
// it does not matter across different targets, nor among events. A patch counts by its effect on the
// recorded object (patch-effect.ts); an event by its type and reason, and its message only when strict.
import type { Action, KubeObject, ReconcileRequest, ReconcileResponse } from '../contract/types.ts';
import { jsonEqual } from '../kube/object-meta.ts';
import { diffJson, show, type Difference } from './json-diff.ts';
import { applyToCopy, patchesEquivalent, recordedTarget } from './patch-effect.ts';

export type { Difference };

export interface CompareOptions {
  /** The recorded request: patches on objects it holds are compared by their effect, not their text. */
  request?: ReconcileRequest;
  /** Compare event messages too (by default a reworded message is not a difference). */
  strict?: boolean;
}

/** The group an action's order is significant within: its target object, "status", or "event" (unordered). */
export function orderingGroup(action: Action): string {
  switch (action.op) {
    case 'patch':
    case 'delete': {
      const t = action.target;
      return `${t.apiVersion} ${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name}`;
    }
    case 'create':
    case 'apply': {
      const m = action.object.metadata ?? {};
      const name = m.name ?? `${m.generateName ?? ''}*`;
      return `${action.object.apiVersion} ${action.object.kind} ${m.namespace ? `${m.namespace}/` : ''}${name}`;
    }
    case 'status':
      return 'status';
    case 'event':
      return 'event';
  }
}

function groupActions(actions: Action[]): Map<string, Array<{ action: Action; index: number }>> {
  const groups = new Map<string, Array<{ action: Action; index: number }>>();
  actions.forEach((action, index) => {
    const key = orderingGroup(action);
    const list = groups.get(key) ?? [];
    list.push({ action, index });
    groups.set(key, list);
  });
  return groups;
}

function sameEvent(a: Action, b: Action, strict: boolean): boolean {
  if (strict || a.op !== 'event' || b.op !== 'event') return jsonEqual(a, b);
  return a.type === b.type && a.reason === b.reason;
}

function compareEvents(expected: Action[], actual: Action[], strict: boolean): Difference[] {
  const unused = [...actual];
  const out: Difference[] = [];
  for (const event of expected) {
    const at = unused.findIndex((candidate) => sameEvent(event, candidate, strict));
    if (at === -1) out.push({ path: 'events', message: `missing ${show(event)}` });
    else unused.splice(at, 1);
  }
  for (const event of unused) out.push({ path: 'events', message: `unexpected ${show(event)}` });
  return out;
}

/**
 * The actual actions with every patch that has the same effect as the expected one at its position
 * replaced by that expected patch, so only real differences remain for the textual comparison. Patches on
 * one target apply in turn, so each is judged on the object as the patches before it left it.
 */
function withEquivalentPatches(expected: Action[], actual: Action[], request: ReconcileRequest | undefined): Action[] {
  if (!request) return actual;
  let current: KubeObject | undefined;
  let baseKnown = true;
  return actual.map((got, i) => {
    const want = expected[i];
    if (want?.op !== 'patch' || got.op !== 'patch' || !jsonEqual(want.target, got.target)) return got;
    current ??= baseKnown ? recordedTarget(request, want.target) : undefined;
    if (!current) return got;
    const same = jsonEqual(want, got) || patchesEquivalent(current, want.patch, got.patch);
    const after = applyToCopy(current, want.patch);
    // After a patch that differs, or one that fails on the recorded object, later ones have no known base.
    current = same && after.ok ? (after.object as KubeObject) : undefined;
    baseKnown = current !== undefined;
    return same ? want : got;
  });
}

function compareSequence(group: string, expected: Action[], given: Action[], request: ReconcileRequest | undefined): Difference[] {
  const actual = withEquivalentPatches(expected, given, request);
  const label = group === 'status' ? 'status actions' : `actions on ${group}`;
  if (expected.length === actual.length && expected.length > 1) {
    // Same actions, different order: say so instead of listing every field that moved.
    const sameSet = expected.every((e) => actual.some((a) => jsonEqual(e, a))) && actual.every((a) => expected.some((e) => jsonEqual(e, a)));
    if (sameSet && !jsonEqual(expected, actual)) {
      return [{ path: label, message: `same actions in a different order: expected ${expected.map((a) => a.op).join(', ')}, got ${actual.map((a) => a.op).join(', ')} (order matters on one target)` }];
    }
  }
  return diffJson(expected, actual).map((d) => ({ path: `${label} [${d.path.slice(1).replace(/^(\d+)/, '#$1')}]`, message: d.message }));
}

/** Every difference that matters; [] when `actual` is an acceptable reply for the recorded request. */
export function compareResponses(expected: ReconcileResponse, actual: ReconcileResponse, options: CompareOptions = {}): Difference[] {
  const out: Difference[] = [];
  const { actions: expectedActions, ...expectedRest } = expected;
  const { actions: actualActions, ...actualRest } = actual;
  out.push(...diffJson(expectedRest, actualRest));

  const expectedGroups = groupActions(expectedActions ?? []);
  const actualGroups = groupActions(actualActions ?? []);
  const keys = [...new Set([...expectedGroups.keys(), ...actualGroups.keys()])].sort();
  for (const key of keys) {
    const e = (expectedGroups.get(key) ?? []).map((x) => x.action);
    const a = (actualGroups.get(key) ?? []).map((x) => x.action);
    out.push(...(key === 'event' ? compareEvents(e, a, options.strict === true) : compareSequence(key, e, a, options.request)));
  }
  return out;
}

export function formatDifferences(differences: Difference[], indent = '    '): string {
  return differences.map((d) => `${indent}${d.path}: ${d.message}`).join('\n');
}
