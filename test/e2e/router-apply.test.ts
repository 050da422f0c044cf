// Server-side apply and events from a function: an `apply` action lands with field manager kubeloop/<loop>
// and a controller ownerReference to the primary, follows later edits, and an `event` action becomes an
// events.k8s.io event about the primary. An apply of the primary itself is an own write: its watch event
// costs no second call, while anyone else's change right after it is still reconciled.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { defineFunction, event, respond } from '../../lib/sdk/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, routerHarness, watchKind, type RouterHarness } from '../support/router-harness.ts';

let h: RouterHarness;
let ns: string;
let served: ServedFunction;
let stamped: ServedFunction;
const STAMP = 'kubeloop.dev/stamp';
let url: string;
let stamperUrl: string;
/** Calls of the stamper per ConfigMap name. */
const stamperCalls = new Map<string, number>();

beforeAll(async () => {
  h = await routerHarness('router-apply');
  ns = h.suite.namespace;
  // Keeps "<name>-copy" equal to the primary's data, by server-side apply; no credentials, no client.
  const copier = defineFunction({
    name: 'copier',
    reconcile: (request: ReconcileRequest) => {
      const source = request.object as V1ConfigMap & ReconcileRequest['object'];
      const name = `${source.metadata?.name}-copy`;
      return respond([
        { op: 'apply', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: source.data ?? {} } },
        event('Normal', 'Copied', `copied into ${name}`),
      ]);
    },
  });
  served = await serveFunction(copier, { port: 0, host: '127.0.0.1', logLevel: 'warn' });
  url = served.url;
  // Stamps the primary itself, by server-side apply, with a label copying its data; it leaves the namespace
  // out (the primary's, as for a patch's target).
  const stamper = defineFunction({
    name: 'stamper',
    reconcile: (request: ReconcileRequest) => {
      const cm = request.object as V1ConfigMap & ReconcileRequest['object'];
      const name = cm.metadata?.name ?? '';
      stamperCalls.set(name, (stamperCalls.get(name) ?? 0) + 1);
      return respond([{ op: 'apply', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { [STAMP]: cm.data?.value ?? 'none' } } } }]);
    },
  });
  stamped = await serveFunction(stamper, { port: 0, host: '127.0.0.1', logLevel: 'warn' });
  stamperUrl = stamped.url;
});
afterAll(async () => {
  await h?.close();
  await served?.close();
  await stamped?.close();
});

describe('apply and event actions', () => {
  it('applies a child with the Loop field manager and owner, keeps it in step, and records the event', async () => {
    const router = await h.router([
      inlineLoop('copier', ns, {
        for: { apiVersion: 'v1', kind: 'ConfigMap' },
        owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
        selector: { matchLabels: { role: 'source' } },
        function: { url },
      }),
    ]);
    await router.waitForLoop('copier');
    const cms = `/api/v1/namespaces/${ns}/configmaps`;
    const source = await h.client.request<V1ConfigMap>({ method: 'POST', path: cms, body: { metadata: { name: 'src', labels: { role: 'source' } }, data: { a: '1' } } });
    const copy = await eventually('copy applied', async () => {
      const cm = await h.client.request<V1ConfigMap>({ path: `${cms}/src-copy` });
      return cm.data?.a === '1' && cm;
    });
    expect(copy.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: 'ConfigMap', name: 'src', uid: source.metadata?.uid, controller: true })]);
    expect(copy.metadata?.managedFields?.map((f) => [f.manager, f.operation])).toContainEqual(['kubeloop/copier', 'Apply']);

    await h.client.request({ method: 'PATCH', path: `${cms}/src`, contentType: 'application/merge-patch+json', body: { data: { a: '2', b: '3' } } });
    await eventually('copy follows', async () => {
      const cm = await h.client.request<V1ConfigMap>({ path: `${cms}/src-copy` });
      return cm.data?.a === '2' && cm.data.b === '3';
    });

    const events = await eventually('Copied event', async () => {
      const list = await h.client.request<{ items: Array<{ reason?: string; note?: string; reportingController?: string; regarding?: { name?: string; uid?: string } }> }>({
        path: `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
      });
      const copied = list.items.filter((e) => e.reason === 'Copied');
      return copied.length > 0 && copied;
    });
    expect(events[0]).toMatchObject({ note: 'copied into src-copy', reportingController: 'kubeloop.dev/router', regarding: { name: 'src', uid: source.metadata?.uid } });
    // The same event is deduplicated, not written on every reconcile.
    expect(events).toHaveLength(1);
  });
});

describe('an apply of the primary', () => {
  it('costs no second call for its own watch event, yet any other writer\'s change right after it is reconciled', async () => {
    const router = await h.router([inlineLoop('stamper', ns, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { role: 'stamped' } }, function: { url: stamperUrl } })]);
    await router.waitForLoop('stamper');
    const skips = async () =>
      ((await router.metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'kubeloop_router_own_write_skips_total')?.values ?? []).reduce((sum, v) => sum + v.value, 0);
    const cms = `/api/v1/namespaces/${ns}/configmaps`;
    const stampOf = async (name: string) => (await h.client.request<V1ConfigMap>({ path: `${cms}/${name}` })).metadata?.labels?.[STAMP];

    // Nobody else writes "quiet": the event of the router's apply is recognised and not sent to the function.
    await h.client.request({ method: 'POST', path: cms, body: { metadata: { name: 'quiet', labels: { role: 'stamped' } }, data: { value: 'a' } } });
    await eventually('quiet stamped', async () => (await stampOf('quiet')) === 'a');
    await eventually('the event of the router\'s own apply skipped', async () => (await skips()) >= 1);
    expect(stamperCalls.get('quiet')).toBe(1);
    // A change the router did not make is called as usual.
    await h.client.request({ method: 'PATCH', path: `${cms}/quiet`, contentType: 'application/merge-patch+json', body: { data: { value: 'b' } } });
    await eventually('quiet stamped again', async () => (await stampOf('quiet')) === 'b');
    expect(stamperCalls.get('quiet')).toBe(2);

    // Another writer answers the event of the router's apply at once, removing or changing the stamp: as
    // close behind our write as a client gets. The router must put it back.
    const watched = await watchKind<V1ConfigMap>(h.client, ns, 'v1', 'ConfigMap');
    try {
      for (const [i, change] of ([null, 'someone-else'] as const).entries()) {
        const name = `raced-${i}`;
        let changed: Promise<unknown> | undefined;
        const off = watched.on('update', (cm) => {
          if (cm.metadata?.name !== name || changed || cm.metadata?.labels?.[STAMP] !== 'v') return;
          changed = h.client.request({ method: 'PATCH', path: `${cms}/${name}`, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [STAMP]: change } } } });
        });
        await h.client.request({ method: 'POST', path: cms, body: { metadata: { name, labels: { role: 'stamped' } }, data: { value: 'v' } } });
        await eventually('the router stamps and the other writer answers', async () => changed);
        off();
        await eventually(`stamp restored after it was ${change === null ? 'removed' : 'changed'}`, async () => (await stampOf(name)) === 'v');
        expect(stamperCalls.get(name)).toBeGreaterThanOrEqual(2);
      }
    } finally {
      await watched.stop();
    }
  });
});
