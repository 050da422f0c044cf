// A hook's admission history as a timeline, newest first: each admission's operation and object, who asked,
// the answer (allowed, denied, patched, or how the function failed and what the failurePolicy made of it),
// the patch's operations, warnings, duration and a link to its trace. Admissions of objects the caller may
// not get are counted, not shown.
import { html } from 'htm/preact';
import type { AdmissionRecord, HookHistory } from './api.ts';
import { badge, showOlder, time, useShownCount, type Tone } from './common.ts';
import { href, type Route } from './routes.ts';

const TONES: Record<string, Tone> = { allowed: 'good', patched: 'good', denied: 'warn' };

const objectOf = (e: AdmissionRecord) => `${e.resource.resource}${e.resource.group ? `.${e.resource.group}` : ''}${e.subResource ? `/${e.subResource}` : ''} ${e.namespace ? `${e.namespace}/` : ''}${e.name ?? ''}`;

function entryView(entry: AdmissionRecord, number: number, here: string) {
  const failed = !(entry.outcome in TONES);
  return html`<li key=${entry.uid} class=${`entry ${failed ? 'failed' : ''}`} data-outcome=${entry.outcome}>
    <div class="entry-head">
      <time datetime=${entry.startedAt}>${time(entry.startedAt)}</time>
      ${badge(entry.outcome, TONES[entry.outcome] ?? 'bad')}
      ${failed ? badge(entry.allowed ? 'admitted (failurePolicy Ignore)' : 'refused', entry.allowed ? 'warn' : 'bad') : ''}
      <code>${entry.operation} ${objectOf(entry)}</code>
      ${entry.dryRun ? badge('dry run', 'neutral') : ''}
      <span class="muted">${entry.user ? `by ${entry.user}, ` : ''}${entry.ms}ms</span>
      ${entry.traceId ? html`<a class="trace-link" href=${href({ view: 'trace', id: entry.traceId, from: here })} aria-label=${`trace of admission ${number}`}>trace ${entry.traceId.slice(0, 8)}</a>` : html`<span class="muted">not traced</span>`}
    </div>
    ${entry.message || entry.warnings || entry.patch
      ? html`<dl class="entry-body">
          ${entry.message ? html`<dt>Message</dt><dd>${entry.code ? `${entry.code}: ` : ''}${entry.message}</dd>` : ''}
          ${entry.warnings ? html`<dt>Warnings</dt><dd><ul>${entry.warnings.map((w) => html`<li>${w}</li>`)}</ul></dd>` : ''}
          ${entry.patch ? html`<dt>Patch</dt><dd><ul>${entry.patch.map((p) => html`<li><code>${p}</code></li>`)}${entry.patchOmitted ? html`<li class="muted">and ${entry.patchOmitted} more</li>` : ''}</ul></dd>` : ''}
        </dl>`
      : ''}
  </li>`;
}

export function AdmissionTimeline({ history, here }: { history: HookHistory; here: Route }) {
  const from = href(here);
  const [count, more] = useShownCount(from);
  const n = history.entries.length;
  const newest = history.entries.slice(Math.max(0, n - count)).reverse();
  return html`<p class="muted">
      ${n} admission${n === 1 ? '' : 's'} kept by gateway ${history.servedBy}, newest first.
      ${history.withheld ? html` <strong>${history.withheld.count} more not shown</strong>: ${history.withheld.why.join('; ')}.` : ''}
    </p>
    ${n === 0 ? html`<p class="muted">No admission recorded${history.withheld ? ' that you may see' : ''}.</p>` : html`<ol class="timeline admissions" reversed>${newest.map((e, i) => entryView(e, n - i, from))}</ol>${showOlder(n - newest.length, more)}`}`;
}
