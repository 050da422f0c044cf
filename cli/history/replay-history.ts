// `kubeloop replay --history FILE`: a flight-recorder entry (from `kubeloop history -o json`) as a fixture.
// The entry keeps the request the function was sent (the latest entry of each object does) and the actions
// it answered, one line each: the function is sent the request again and passes when it asks for the same
// actions (kind, operation and target; a patch's content is not kept by the recorder, so not compared).
import { readFileSync } from 'node:fs';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import { callFunction, type ReplayOptions } from '../../lib/replay/replay-client.ts';
import { type ObjectHistory, describeAction, MAX_RECORDED_LINES, type ReconcileRecord } from '../../router/index.ts';
import type { CaseLine } from '../case-progress.ts';

type Entry = ReconcileRecord & { requestOmitted?: string };

export interface HistoryCase {
  title: string;
  request: ReconcileRequest;
  /** The recorded action lines and how many more the answer had. */
  actions: string[];
  omitted: number;
}

/**
 * The entries that carry their request, of a `history -o json` file, one entry saved alone, or a history file
 * the router wrote (--history-dir: one entry per line, each naming its object); a problem otherwise.
 */
export function historyCases(file: string, text = readFileSync(file, 'utf8')): { cases: HistoryCase[] } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    // A history file: every line an entry (one cut short by a full disk is skipped, as kubeloop history --file does).
    const entries = lines.length > 1 ? lines.flatMap((line) => parsedOrNone(line)) : [];
    if (entries.length === 0) return { problem: `not valid JSON: ${(error as Error).message}` };
    value = { kind: 'ObjectHistory', entries };
  }
  const history = value as Partial<ObjectHistory>;
  const entries: Entry[] = history.kind === 'ObjectHistory' ? [...(history.entries ?? [])] : [value as Entry];
  const withRequest = entries.filter((e) => e.request?.kind === 'ReconcileRequest' && Array.isArray(e.actions));
  if (withRequest.length === 0) {
    const withheld = entries.find((e) => e.requestOmitted)?.requestOmitted;
    return { problem: withheld ? `the request was withheld: ${withheld}` : 'no entry keeps its request (the router keeps the latest reconcile\'s, when it called the function): save kubeloop history -o json again after a reconcile' };
  }
  const object = history.object ? `${history.object.kind} ${history.object.namespace ? `${history.object.namespace}/` : ''}${history.object.name}` : undefined;
  // A line of a history file names its own object (its request's, the primary).
  const named = (e: Entry) => object ?? (e.request?.object ? `${e.request.object.kind} ${objectKey(e.request.object.metadata)}` : 'entry');
  return {
    cases: withRequest.map((e) => ({ title: `${file}  ${named(e)} at ${e.startedAt} (${e.outcome})`, request: e.request!, actions: e.actions, omitted: e.omitted?.actions ?? 0 })),
  };
}

function parsedOrNone(line: string): Entry[] {
  try {
    const entry = JSON.parse(line) as Entry | null;
    return entry && typeof entry === 'object' && Array.isArray(entry.actions) ? [entry] : [];
  } catch {
    return [];
  }
}

/** Pure: the lines that differ between what was recorded and what the function answers now. */
export function compareActions(recorded: { actions: string[]; omitted: number }, now: string[]): string[] {
  const shown = now.slice(0, MAX_RECORDED_LINES);
  const differences: string[] = [];
  const length = Math.max(recorded.actions.length, shown.length);
  for (let i = 0; i < length; i++) {
    if (recorded.actions[i] === shown[i]) continue;
    if (recorded.actions[i] !== undefined) differences.push(`    - ${recorded.actions[i]}`);
    if (shown[i] !== undefined) differences.push(`    + ${shown[i]}`);
  }
  const recordedTotal = recorded.actions.length + recorded.omitted;
  if (differences.length === 0 && recordedTotal !== now.length) differences.push(`    ${recordedTotal} actions recorded, ${now.length} now`);
  return differences;
}

export async function replayHistoryCase(c: HistoryCase, options: ReplayOptions): Promise<CaseLine> {
  const reply = await callFunction(c.request, options);
  if (!reply.ok) return { status: 'FAIL', title: c.title, detail: `    ${reply.message}` };
  const now = ('actions' in reply.response ? (reply.response.actions ?? []) : []).map((a) => describeAction(a));
  const differences = compareActions(c, now);
  return differences.length === 0 ? { status: 'PASS', title: c.title } : { status: 'FAIL', title: c.title, detail: differences.join('\n') };
}
