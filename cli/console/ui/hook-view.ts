// One AdmissionHook or ClusterAdmissionHook: its Ready condition, its admission history from the gateway
// (admissions.kubeloop.dev, read with the caller's rights) and its recent admissions from the trace backend
// (the gateway's `admit <hook>` traces), each a link to its waterfall.
import { html } from 'htm/preact';
import { getJson, query, type HookDetail } from './api.ts';
import { AdmissionTimeline } from './admission-timeline.ts';
import { badge, errorBox, refusedBox, usePoll } from './common.ts';
import { href } from './routes.ts';
import { formatDuration } from '../waterfall.ts';

export function HookView({ id }: { id: string }) {
  const { data, error } = usePoll(() => getJson<HookDetail>(`/api/hook?${query({ id })}`), 3000, `hook ${id}`);
  if (!data) return error ? errorBox(error) : html`<p class="muted">Loading ...</p>`;
  const { row } = data;
  const here = { view: 'hook', id } as const;
  return html`<section aria-labelledby="hook-title">
    <nav class="crumbs" aria-label="Breadcrumb"><a href=${href({ view: 'overview' })}>All Loops and hooks</a> / ${row.kind} ${row.id}</nav>
    <h1 id="hook-title">${row.kind} ${row.id}</h1>
    <dl class="conditions">
      ${row.ready ? html`<dt>Ready</dt><dd>${badge(row.ready.status, row.ready.status === 'True' ? 'good' : 'bad')} <span class="reason">${row.ready.reason ?? ''}</span> ${row.ready.message ?? ''}</dd>` : ''}
    </dl>
    <h2 id="history-title">Admission history</h2>
    ${data.history ? html`<${AdmissionTimeline} history=${data.history} here=${here} />` : ''}
    ${data.historyUnavailable ? refusedBox('The admission history', data.historyUnavailable.code, data.historyUnavailable.message) : ''}
    <h2 id="admissions-title">Recent admission traces</h2>
    ${data.traces === null ? html`<p class="muted">No trace backend (start the console with --jaeger or --receive-traces).</p>` : ''}
    ${data.admissionsUnavailable ? errorBox(data.admissionsUnavailable) : ''}
    <ul class="links">
      ${data.admissions.map((a) => {
        const outcome = String(a.attributes['kubeloop.admission.outcome'] ?? '');
        return html`<li>
          <a href=${href({ view: 'trace', id: a.traceId, from: href(here) })}>${new Date(a.startUs / 1000).toISOString().slice(11, 23)}Z ${String(a.attributes['k8s.admission.operation'] ?? '')} ${String(a.attributes['k8s.kind'] ?? '')} ${String(a.attributes['k8s.object'] ?? '')}</a>
          ${' '}${outcome ? badge(outcome, a.failed ? 'bad' : 'neutral') : ''}${a.failed && !outcome ? badge('failed', 'bad') : ''} ${formatDuration(a.durationUs)}
        </li>`;
      })}
    </ul>
    ${data.traces !== null && data.admissions.length === 0 ? html`<p class="muted">None in ${data.traces}.</p>` : ''}
  </section>`;
}
