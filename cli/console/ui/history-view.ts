// An object's reconcile history as a timeline, newest first: each reconcile's triggers, the function's
// answer (and what changed since the previous answer), each write and its outcome, conflicts, durations and
// a link to its trace. A refusal by the history API is shown as such.
import { html } from 'htm/preact';
import { getJson, query, type HistoryAnswer, type Timeline } from './api.ts';
import { badge, errorBox, refusedBox, showOlder, time, useShownCount, usePoll, type Tone } from './common.ts';
import { href } from './routes.ts';

type Entry = Timeline['entries'][number];

const WRITE_TONES: Record<string, Tone> = { applied: 'good', exists: 'neutral', skipped: 'neutral', notfound: 'warn', refused: 'bad', conflict: 'bad', error: 'bad' };

function entryView(entry: Entry, index: number, here: string) {
  const d = entry.durations;
  // Keyed: a new reconcile arrives at the top, and each entry's element must stay its own.
  return html`<li key=${`${entry.startedAt} ${entry.traceId ?? index}`} class=${`entry ${entry.failed ? 'failed' : ''}`} data-outcome=${entry.outcome}>
    <div class="entry-head">
      <time datetime=${entry.startedAt}>${time(entry.startedAt)}</time>
      ${badge(entry.outcome, entry.failed ? 'bad' : 'good')}
      ${entry.replayed ? badge('replayed after a conflict', 'warn') : ''}
      ${entry.conflicts > 0 ? badge(`${entry.conflicts} conflict${entry.conflicts === 1 ? '' : 's'}`, 'bad') : ''}
      <span class="muted">${d.totalMs}ms (queue ${d.queueMs}ms${d.callMs === undefined ? '' : `, call ${d.callMs}ms`}${d.applyMs === undefined ? '' : `, apply ${d.applyMs}ms`})</span>
      ${entry.traceId ? html`<a class="trace-link" href=${href({ view: 'trace', id: entry.traceId, from: here })} aria-label=${`trace of reconcile ${index + 1}`}>trace ${entry.traceId.slice(0, 8)}</a>` : html`<span class="muted">not traced</span>`}
    </div>
    <dl class="entry-body">
      <dt>Triggers</dt><dd><ul>${entry.triggers.map((t) => html`<li><code>${t}</code></li>`)}</ul></dd>
      ${entry.callError ? html`<dt>Call</dt><dd>${badge(entry.callError, 'bad')}</dd>` : ''}
      <dt>Answer</dt>
      <dd>${entry.actions.length === 0 ? html`<span class="muted">no actions</span>` : html`<ul>${entry.actions.map((a) => html`<li><code>${a}</code></li>`)}</ul>`}</dd>
      ${entry.diff && (entry.diff.added.length > 0 || entry.diff.removed.length > 0)
        ? html`<dt>Changed since the previous answer</dt><dd><ul class="diff">${entry.diff.added.map((a) => html`<li class="added"><code>+ ${a}</code></li>`)}${entry.diff.removed.map((a) => html`<li class="removed"><code>- ${a}</code></li>`)}</ul></dd>`
        : entry.diff
          ? html`<dt>Changed since the previous answer</dt><dd class="muted">same actions</dd>`
          : ''}
      ${entry.writes.length > 0
        ? html`<dt>Writes</dt><dd><ul class="writes">${entry.writes.map(
            (w) => html`<li>${badge(w.result, WRITE_TONES[w.result] ?? 'neutral')} <code>${w.action}</code> <span class="muted">${w.ms}ms</span>${w.status ? ` ${w.status}` : ''}${w.message ? html`<div class="message">${w.message}</div>` : ''}</li>`,
          )}</ul></dd>`
        : ''}
      ${entry.omitted && (entry.omitted.actions > 0 || entry.omitted.writes > 0) ? html`<dt>Not kept</dt><dd>${entry.omitted.actions} actions, ${entry.omitted.writes} writes</dd>` : ''}
      ${entry.requestDigest ? html`<dt>Request digest</dt><dd><code>${entry.requestDigest}</code>${entry.sameRequest ? ' (same world as the previous reconcile)' : ''}</dd>` : ''}
    </dl>
  </li>`;
}

export function HistoryView({ loop, namespace, name }: { loop: string; namespace?: string; name: string }) {
  const { data, error } = usePoll(() => getJson<HistoryAnswer>(`/api/history?${query({ loop, namespace, name })}`), 3000, `history ${loop} ${namespace} ${name}`);
  const object = `${namespace ? `${namespace}/` : ''}${name}`;
  const here = href({ view: 'history', loop, ...(namespace ? { namespace } : {}), name });
  const [count, more] = useShownCount(here);
  const head = html`<nav class="crumbs" aria-label="Breadcrumb"><a href=${href({ view: 'overview' })}>All Loops</a> / <a href=${href({ view: 'loop', id: loop })}>Loop ${loop}</a> / ${object}</nav>
    <h1 id="history-title">Reconcile history of ${object}</h1>`;
  if (!data) return html`<section aria-labelledby="history-title">${head}${error ? errorBox(error) : html`<p class="muted">Loading ...</p>`}</section>`;
  if ('unavailable' in data) return html`<section aria-labelledby="history-title">${head}${refusedBox(`The history of ${object}`, data.unavailable.code, data.unavailable.message)}</section>`;
  const t = data.timeline;
  return html`<section aria-labelledby="history-title">
    ${head}
    <p class="muted">${t.object.kind} ${object}, Loop ${t.loop}, from router ${t.servedBy}${t.owner ? ` (the key now belongs to ${t.owner})` : ''}: ${t.entries.length} reconcile${t.entries.length === 1 ? '' : 's'}, newest first. Refreshed every 3 s.</p>
    ${t.entries.length === 0 ? html`<p class="muted">No reconcile recorded.</p>` : html`<ol class="timeline" reversed>${t.entries.slice(0, count).map((e, i) => entryView(e, t.entries.length - 1 - i, here))}</ol>${showOlder(t.entries.length - Math.min(count, t.entries.length), more)}`}
  </section>`;
}
