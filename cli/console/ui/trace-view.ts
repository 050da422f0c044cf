// A reconcile's or an admission's trace as a waterfall: each span a row (indented under its parent, its bar
// on the trace's time axis), the API server's spans among kubeloop's; a row opens the span's attributes and
// events. Up/Down move between rows. Refreshed every 2 s: spans exported late (the API server's) join.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { getJson, type TraceAnswer, type TraceSpan } from './api.ts';
import { errorBox, usePoll } from './common.ts';
import { href } from './routes.ts';
import { formatDuration, layoutWaterfall } from '../waterfall.ts';

function details(span: TraceSpan) {
  const attributes = Object.entries(span.attributes).sort(([a], [b]) => a.localeCompare(b));
  return html`<aside class="span-details" aria-label="Span details">
    <h2>${span.name}</h2>
    <p class="muted">${span.service}, ${formatDuration(span.durationUs)}${span.error ? html`, <strong class="bad-text">error: ${span.error.message}</strong>` : ''}</p>
    <table class="attributes"><tbody>${attributes.map(([k, v]) => html`<tr><th scope="row">${k}</th><td><code>${String(v)}</code></td></tr>`)}</tbody></table>
    ${span.events.length > 0
      ? html`<h3>Events</h3><ul>${span.events.map((e) => html`<li><strong>${e.name}</strong> ${Object.entries(e.attributes).map(([k, v]) => html` <code>${k}=${String(v)}</code>`)}</li>`)}</ul>`
      : ''}
  </aside>`;
}

function moveFocus(event: KeyboardEvent) {
  if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
  const rows = Array.from(document.querySelectorAll<HTMLButtonElement>('.waterfall .span-row'));
  const at = rows.indexOf(document.activeElement as HTMLButtonElement);
  const next = rows[Math.max(0, Math.min(rows.length - 1, at + (event.key === 'ArrowDown' ? 1 : -1)))];
  if (next) {
    event.preventDefault();
    next.focus();
  }
}

export function TraceView({ id, from }: { id: string; from?: string }) {
  const { data, error } = usePoll(() => getJson<TraceAnswer>(`/api/traces/${encodeURIComponent(id)}`), 2000, `trace ${id}`);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const back = from ? html`<a href=${from}>back to the ${from.startsWith('#/hook/') ? 'hook' : 'history'}</a>` : html`<a href=${href({ view: 'overview' })}>All Loops</a>`;
  const head = html`<nav class="crumbs" aria-label="Breadcrumb">${back} / trace ${id}</nav><h1 id="trace-title">Trace ${id}</h1>`;
  if (!data) return html`<section aria-labelledby="trace-title">${head}${error ? errorBox(error) : html`<p class="muted">Loading ...</p>`}</section>`;
  const waterfall = layoutWaterfall(data.spans);
  const services = [...new Set(data.spans.map((s) => s.service))].sort();
  const chosen = data.spans.find((s) => s.spanId === selected);
  return html`<section aria-labelledby="trace-title">
    ${head}
    <p class="muted">${data.spans.length} spans from ${services.join(', ')}, ${formatDuration(waterfall.durationUs)} in all (from ${data.source}).</p>
    <div class="trace-layout">
      <ol class="waterfall" aria-label="Spans" onKeyDown=${moveFocus}>
        ${waterfall.rows.map(
          (row) => html`<li>
            <button type="button" class=${`span-row ${row.span.error ? 'error' : ''} ${row.span.spanId === selected ? 'selected' : ''}`} data-service=${row.span.service} data-name=${row.span.name}
              aria-pressed=${row.span.spanId === selected} onClick=${() => setSelected(row.span.spanId)}>
              <span class="service">${row.span.service}</span>
              <span class="span-label" style=${{ paddingLeft: `${row.depth * 14}px` }}>${row.span.name}${row.orphan ? html` <span class="muted">(parent not in trace)</span>` : ''}</span>
              <span class="span-track"><span class="span-bar" style=${{ left: `${row.offsetPct}%`, width: `max(2px, ${row.widthPct}%)` }}></span></span>
              <span class="span-duration">${formatDuration(row.span.durationUs)}</span>
            </button>
          </li>`,
        )}
      </ol>
      ${chosen ? details(chosen) : html`<aside class="span-details muted">Choose a span to see its attributes and events.</aside>`}
    </div>
  </section>`;
}
