// An object's reconcile history as the console's timeline: newest first, each entry with its triggers as
// text, its writes grouped by result, and what its answer changed since the previous answer (actions added
// and gone). Pure: the server builds it from the history API's ObjectHistory, the UI draws it.
import { describeWatchEvent, type ObjectHistory, type ReconcileRecord, type WriteRecord } from '../../router/index.ts';

export interface TimelineEntry {
  startedAt: string;
  outcome: string;
  /** An outcome that needs a look: anything but ok and the stages that just waited. */
  failed: boolean;
  replayed: boolean;
  traceId?: string;
  triggers: string[];
  callError?: string;
  actions: string[];
  writes: WriteRecord[];
  /** Writes that conflicted (409, or result conflict). */
  conflicts: number;
  /** Against the previous entry that answered (its actions): undefined when this one did not answer or is the first. */
  diff?: { added: string[]; removed: string[] };
  omitted?: { actions: number; writes: number };
  durations: ReconcileRecord['durations'];
  requestDigest?: string;
  /** Same digest as the previous entry: the function was shown the same world. */
  sameRequest: boolean;
}

export interface Timeline {
  object: ObjectHistory['object'];
  loop: string;
  servedBy: string;
  owner?: string;
  entries: TimelineEntry[];
}

/** Outcomes that are not failures: the reconcile succeeded, or stopped early by design and will run again. */
const CALM = new Set(['ok', 'expectations-pending', 'own-write-seen', 'replay-pending', 'pending']);

/** Did this entry carry an answer (so the diff with the next one means something)? */
const answered = (entry: ReconcileRecord) => entry.callError === undefined && (entry.actions.length > 0 || entry.outcome === 'ok' || entry.outcome === 'conflict' || entry.outcome === 'action-error');

function diffLines(before: readonly string[], after: readonly string[]): { added: string[]; removed: string[] } {
  const count = (lines: readonly string[]) => lines.reduce((m, l) => m.set(l, (m.get(l) ?? 0) + 1), new Map<string, number>());
  const was = count(before);
  const now = count(after);
  const added: string[] = [];
  const removed: string[] = [];
  for (const [line, n] of now) for (let i = was.get(line) ?? 0; i < n; i++) added.push(line);
  for (const [line, n] of was) for (let i = now.get(line) ?? 0; i < n; i++) removed.push(line);
  return { added, removed };
}

export function buildTimeline(history: ObjectHistory & { owner?: string }): Timeline {
  const entries: TimelineEntry[] = [];
  let previousAnswer: ReconcileRecord | undefined;
  let previousDigest: string | undefined;
  for (const entry of history.entries) {
    const item: TimelineEntry = {
      startedAt: entry.startedAt,
      outcome: entry.outcome,
      failed: !CALM.has(entry.outcome),
      replayed: entry.replayed === true,
      triggers: entry.triggers.length > 0 ? entry.triggers.map(describeWatchEvent) : ['REQUEUE (the router requeued the key)'],
      actions: [...entry.actions],
      writes: [...entry.writes],
      conflicts: entry.writes.filter((w) => w.result === 'conflict' || w.status === 409).length,
      durations: entry.durations,
      sameRequest: entry.requestDigest !== undefined && entry.requestDigest === previousDigest,
    };
    if (entry.traceId) item.traceId = entry.traceId;
    if (entry.callError) item.callError = entry.callError;
    if (entry.omitted) item.omitted = entry.omitted;
    if (entry.requestDigest) item.requestDigest = entry.requestDigest;
    if (answered(entry)) {
      if (previousAnswer) item.diff = diffLines(previousAnswer.actions, entry.actions);
      previousAnswer = entry;
    }
    previousDigest = entry.requestDigest;
    entries.push(item);
  }
  return {
    object: history.object,
    loop: history.loop,
    servedBy: history.servedBy,
    ...(history.owner ? { owner: history.owner } : {}),
    entries: entries.reverse(),
  };
}
