// `kubeloop history` as text: one block per reconcile, oldest first: when, outcome, durations and trace id,
// then what triggered it, what the function asked for and what each write did.
import { describeWatchEvent, type ObjectHistory, type ReconcileRecord } from '../../router/index.ts';

function durations(d: ReconcileRecord['durations']): string {
  const parts = [`queue ${d.queueMs}ms`, d.callMs === undefined ? undefined : `call ${d.callMs}ms`, d.applyMs === undefined ? undefined : `apply ${d.applyMs}ms`].filter(Boolean);
  return `${d.totalMs}ms (${parts.join(', ')})`;
}

function entryLines(entry: ReconcileRecord): string[] {
  const head = [entry.startedAt, entry.outcome, entry.replayed ? 'replayed after a conflict, no call' : undefined, durations(entry.durations), entry.traceId ? `trace ${entry.traceId}` : undefined];
  const lines = [head.filter(Boolean).join('  ')];
  const section = (label: string, items: string[]) => items.forEach((item, i) => lines.push(`  ${(i === 0 ? label : '').padEnd(10)}${item}`));
  section('trigger', entry.triggers.length > 0 ? entry.triggers.map(describeWatchEvent) : ['REQUEUE (the router requeued the key)']);
  if (entry.callError) section('call', [entry.callError]);
  section('actions', entry.actions.length > 0 ? entry.actions : ['none']);
  const writes = entry.writes.map((w) => `${w.action} -> ${w.result}${w.status ? ` ${w.status}` : ''}${w.message ? `: ${w.message}` : ''} (${w.ms}ms)`);
  if (writes.length > 0) section('writes', writes);
  if (entry.omitted && (entry.omitted.actions > 0 || entry.omitted.writes > 0)) section('omitted', [`${entry.omitted.actions} actions, ${entry.omitted.writes} writes not kept`]);
  if (entry.requestDigest) section('digest', [entry.requestDigest]);
  return lines;
}

export function formatHistory(history: ObjectHistory & { owner?: string }): string {
  const { object } = history;
  const name = object.namespace ? `${object.namespace}/${object.name}` : object.name;
  const n = history.entries.length;
  const lines = [`${object.kind} ${name}, Loop ${history.loop}, router ${history.servedBy}: ${n === 0 ? 'no reconcile recorded' : `${n} reconcile${n === 1 ? '' : 's'}, oldest first`}`];
  if (history.owner) lines.push(`note: the key belongs to router ${history.owner} now; reconciles there are kept there`);
  for (const entry of history.entries) lines.push('', ...entryLines(entry));
  return lines.join('\n');
}
