// One Loop: its conditions, its primaries (each a link to that object's reconcile history) and its recent
// failed reconciles from the trace backend (each a link to its trace and to the object's history).
import { html } from 'htm/preact';
import { getJson, query, type LoopDetail } from './api.ts';
import { badge, errorBox, refusedBox, usePoll } from './common.ts';
import { href } from './routes.ts';
import { formatDuration } from '../waterfall.ts';

/** `kubeloop.object` of a reconcile's root: `<namespace>/<name>` or `<name>`. */
function objectOf(key: unknown): { namespace?: string; name: string } | undefined {
  if (typeof key !== 'string' || key === '') return undefined;
  const [a, b] = key.split('/');
  return b === undefined ? { name: a as string } : { namespace: a as string, name: b };
}

export function LoopView({ id }: { id: string }) {
  const { data, error } = usePoll(() => getJson<LoopDetail>(`/api/loop?${query({ id })}`), 3000, `loop ${id}`);
  if (!data) return error ? errorBox(error) : html`<p class="muted">Loading ...</p>`;
  const { row } = data;
  const conditions = [
    ['Ready', row.ready],
    ['Throttled', row.throttled],
    ['ShadowDiverged', row.shadow?.diverged],
    ['CanaryRolledBack', row.canary?.rolledBack],
  ] as const;
  return html`<section aria-labelledby="loop-title">
    <nav class="crumbs" aria-label="Breadcrumb"><a href=${href({ view: 'overview' })}>All Loops</a> / ${row.kind} ${row.id}</nav>
    <h1 id="loop-title">${row.kind} ${row.id}</h1>
    ${row.for ? html`<p>Reconciles <code>${row.for.apiVersion} ${row.for.kind}</code></p>` : ''}
    <dl class="conditions">
      ${conditions.map(([type, c]) =>
        c ? html`<dt>${type}</dt><dd>${badge(c.status, (type === 'Ready') === (c.status === 'True') ? 'good' : 'bad')} <span class="reason">${c.reason ?? ''}</span> ${c.message ?? ''}</dd>` : '',
      )}
    </dl>
    <div class="columns">
      <section aria-labelledby="objects-title">
        <h2 id="objects-title">Objects: reconcile history</h2>
        ${data.objectsUnavailable ? refusedBox('The objects', data.objectsUnavailable.code, data.objectsUnavailable.message) : ''}
        <ul class="links">
          ${data.objects.map((o) => html`<li><a href=${href({ view: 'history', loop: row.id, ...(o.namespace ? { namespace: o.namespace } : {}), name: o.name })}>${o.namespace ? `${o.namespace}/` : ''}${o.name}</a></li>`)}
        </ul>
        ${data.objects.length === 0 && !data.objectsUnavailable ? html`<p class="muted">None yet.</p>` : ''}
      </section>
      <section aria-labelledby="failures-title">
        <h2 id="failures-title">Recent failed reconciles</h2>
        ${data.traces === null ? html`<p class="muted">No trace backend (start the console with --jaeger or --receive-traces).</p>` : ''}
        ${data.failuresUnavailable ? errorBox(data.failuresUnavailable) : ''}
        <ul class="links">
          ${data.failures.map((f) => {
            const object = objectOf(f.attributes['kubeloop.object']);
            return html`<li>
              <a href=${href({ view: 'trace', id: f.traceId })}>${new Date(f.startUs / 1000).toISOString().slice(11, 23)}Z ${String(f.attributes['kubeloop.object'] ?? f.name)}</a>
              ${' '}${badge('failed', 'bad')} ${formatDuration(f.durationUs)}
              ${object ? html` · <a href=${href({ view: 'history', loop: row.id, ...object })}>history</a>` : ''}
            </li>`;
          })}
        </ul>
        ${data.traces !== null && data.failures.length === 0 ? html`<p class="muted">None in ${data.traces}.</p>` : ''}
      </section>
    </div>
  </section>`;
}
