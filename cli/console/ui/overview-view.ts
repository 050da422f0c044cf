// The first page: every Loop, ClusterLoop, AdmissionHook and ClusterAdmissionHook the caller may list, with
// Ready and its reason, throttling, shadow and canary state, and the router's figures; refreshed every 2 s.
import { html } from 'htm/preact';
import { getJson, type Overview, type OverviewRow } from './api.ts';
import { badge, errorBox, refusedBox, usePoll } from './common.ts';
import { href } from './routes.ts';

const isLoop = (row: OverviewRow) => row.kind === 'Loop' || row.kind === 'ClusterLoop';

function ready(row: OverviewRow) {
  if (!row.ready) return badge('Unknown', 'neutral', 'no Ready condition written yet');
  const ok = row.ready.status === 'True';
  return html`${badge(ok ? 'Ready' : 'Not Ready', ok ? 'good' : 'bad', row.ready.message)}${ok ? '' : html` <span class="reason">${row.ready.reason ?? ''}</span>`}${
    !ok && row.ready.message ? html`<div class="message">${row.ready.message}</div>` : ''
  }`;
}

function versions(row: OverviewRow) {
  const parts = [];
  if (row.throttled?.status === 'True') parts.push(badge(`Throttled: ${row.throttled.reason ?? ''}`, 'warn', row.throttled.message));
  if (row.shadow) parts.push(badge(row.shadow.diverged?.status === 'True' ? 'Shadow diverged' : 'Shadow', row.shadow.diverged?.status === 'True' ? 'warn' : 'neutral', row.shadow.diverged?.message));
  if (row.canary) parts.push(badge(row.canary.rolledBack?.status === 'True' ? `Canary rolled back` : `Canary ${row.canary.weight}%`, row.canary.rolledBack?.status === 'True' ? 'bad' : 'neutral', row.canary.rolledBack?.message));
  return parts;
}

const figure = (value: number | undefined) => (value === undefined ? html`<span class="muted">-</span>` : String(value));

function rowView(row: OverviewRow) {
  const name = html`<a href=${href({ view: isLoop(row) ? 'loop' : 'hook', id: row.id })}>${row.name}</a>`;
  return html`<tr data-kind=${row.kind} data-id=${row.id}>
    <td>${row.kind}</td>
    <td class="namespace">${row.namespace ?? ''}</td>
    <th scope="row">${name}</th>
    <td>${ready(row)}</td>
    <td>${versions(row)}</td>
    <td class="num">${figure(row.metrics?.queue)}</td>
    <td class="num">${figure(row.metrics?.inFlight)}</td>
    <td class="num">${figure(row.metrics?.reconciles)}</td>
    <td class="num">${row.metrics && row.metrics.errors > 0 ? badge(String(row.metrics.errors), 'bad') : figure(row.metrics?.errors)}</td>
  </tr>`;
}

export function OverviewView() {
  const { data, error } = usePoll(() => getJson<Overview>('/api/overview'), 2000, 'overview');
  if (!data) return error ? errorBox(error) : html`<p class="muted">Loading ...</p>`;
  return html`<section aria-labelledby="overview-title">
    <h1 id="overview-title">Loops and admission hooks</h1>
    ${error ? html`<p class="stale" role="status">Refresh failed, showing the last answer: ${error}</p>` : ''}
    <table class="overview">
      <thead>
        <tr><th>Kind</th><th>Namespace</th><th>Name</th><th>Ready</th><th>Throttling, shadow, canary</th><th class="num">Queue</th><th class="num">In flight</th><th class="num">Reconciles</th><th class="num">Errors</th></tr>
      </thead>
      <tbody>${data.rows.length === 0 ? html`<tr><td colspan="9" class="muted">Nothing you may list.</td></tr>` : data.rows.map(rowView)}</tbody>
    </table>
    <p class="muted metrics-source">Router metrics: ${data.metrics.unavailable ? `not shown (${data.metrics.unavailable})` : data.metrics.source}</p>
    ${data.refused.map((r) => refusedBox(`${r.kind} in ${r.namespace ?? 'all namespaces'}`, r.code, r.message))}
  </section>`;
}
