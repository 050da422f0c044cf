import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import type { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { KubeApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { harness, pod, podSet, PODSETS, settle, stopRunners } from '../../test/support/loop-runner-harness.ts';
import { jsonAnswering } from '../../test/support/json-writes-client.ts';

afterEach(stopRunners);

describe('LoopRunner', () => {
  it('queues nothing until every cache has its first complete list, then calls each primary once (ADDED)', async () => {
    const h = harness();
    await h.runner.start();
    h.podsets.sync();
    await settle();
    h.podsets.put(podSet('one'));
    // The pods are not listed yet: a PodSet must never be called with half its pods.
    expect(h.runner.stats()).toMatchObject({ synced: false, pendingKeys: 0 });
    h.pods.sync();
    h.services.sync();
    await h.runner.synced;
    await h.calledAndIdle(1);
    expect(h.calls[0]?.request).toMatchObject({ loop: 'podset', trigger: { type: 'ADDED' }, object: { metadata: { name: 'one' } } });
    expect(h.calls[0]?.url).toBe('http://podset.fns.svc:8080/');
  });

  it('calls every primary again each resync period (RESYNC), and never once stopped', async () => {
    const h = harness({ resyncPeriodSeconds: 0.3 });
    h.podsets.put(podSet('one'));
    h.podsets.put(podSet('two'));
    await h.started();
    await h.calledAndIdle(2);
    const resyncs = () => h.calls.filter((c) => c.request.trigger.type === 'RESYNC').map((c) => c.request.object.metadata?.name);
    await vi.waitFor(() => expect(resyncs().length).toBeGreaterThanOrEqual(6), { timeout: 10_000, interval: 50 });
    expect(resyncs().filter((name) => name === 'one').length).toBeGreaterThanOrEqual(2);
    expect(resyncs().filter((name) => name === 'two').length).toBeGreaterThanOrEqual(2);
    await h.runner.stop();
    const atStop = h.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(h.calls).toHaveLength(atStop);
  });

  it('sends the first call before it has queued every primary: the first key alone, the rest afterwards', async () => {
    const queuedAtFirstCall: number[] = [];
    const h = harness({ function: { url: 'http://podset.fns.svc:8080/', maxConcurrency: 2 } }, () => (queuedAtFirstCall.push(h.runner.stats().pendingKeys), {}));
    for (let i = 0; i < 300; i++) h.podsets.put(podSet(`p${i}`));
    await h.started();
    await h.calledAndIdle(300);
    // The first call went out with its own key queued, not behind 300 keys.
    expect(queuedAtFirstCall[0]).toBe(1);
    expect(new Set(h.calls.map((c) => c.request.object.metadata?.name)).size).toBe(300);
    expect(h.calls.every((c) => c.request.trigger.type === 'ADDED')).toBe(true);
  });

  it('queues a change made while the first calls are still being queued after them, and calls nothing about a primary deleted meanwhile', async () => {
    const h = harness({ function: { url: 'http://podset.fns.svc:8080/', maxConcurrency: 2 } });
    for (let i = 0; i < 300; i++) h.podsets.put(podSet(`p${i}`));
    await h.runner.start();
    for (const informer of [h.podsets, h.pods, h.services]) informer.sync();
    // Promise callbacks only: the caches are complete and the first key queued, the rest not yet.
    while (!h.runner.stats().synced) await Promise.resolve();
    expect(h.runner.stats().pendingKeys).toBeLessThan(300);
    h.podsets.put(podSet('p299', { labels: { changed: 'yes' }, resourceVersion: '2' }));
    h.podsets.remove(podSet('p298'));
    await h.runner.synced;
    await h.calledAndIdle(299);
    // Its first call and the change are one call, as when every key was queued at once: the change's trigger, its new state.
    expect(h.callsFor('p299')).toHaveLength(1);
    expect(h.callsFor('p299')[0]?.request).toMatchObject({ trigger: { type: 'MODIFIED' }, object: { metadata: { labels: { changed: 'yes' } } } });
    expect(h.callsFor('p298')).toHaveLength(0);
  });

  it('settles the watch event of its own patch of the primary before the queue, and queues any later change', async () => {
    const patched: string[] = [];
    const api = {
      client: jsonAnswering(({ path }) => (patched.push(path), { metadata: { resourceVersion: `${patched.length + 1}` } })),
      discovery: { resolve: async () => PODSETS } as unknown as ResourceDiscovery,
    };
    const h = harness({ owns: [] }, (request) => ({
      actions: [{ op: 'patch', target: { apiVersion: PODSETS.apiVersion, kind: PODSETS.kind, namespace: 'a', name: request.object.metadata!.name! }, patch: [{ op: 'add', path: '/metadata/labels', value: { seen: 'yes' } }] }],
    }), api);
    h.podsets.put(podSet('one'));
    await h.started();
    await h.calledAndIdle(1);
    expect(patched).toEqual(['/apis/app.kubeloop.dev/v1alpha1/namespaces/a/podsets/one']);
    // The event of exactly what our patch produced: not queued at all, no second call.
    h.podsets.put(podSet('one', { labels: { seen: 'yes' }, resourceVersion: '2' }));
    expect(h.runner.stats().pendingKeys).toBe(0);
    // Someone else's change afterwards is queued and called as usual.
    h.podsets.put(podSet('one', { labels: { seen: 'no' }, resourceVersion: '3' }));
    expect(h.runner.stats().pendingKeys).toBe(1);
    await h.calledAndIdle(2);
  });

  it('settles the watch event of its own patch that arrives before the PATCH answers, when that reconcile ends: no second pass', async () => {
    const h = harness({ owns: [] }, (request) => ({
      actions: [{ op: 'patch', target: { apiVersion: PODSETS.apiVersion, kind: PODSETS.kind, namespace: 'a', name: request.object.metadata!.name! }, patch: [{ op: 'add', path: '/metadata/labels', value: { seen: 'yes' } }] }],
    }), {
      // The watch is faster than the reply: the event of the patched object reaches the runner while the key is in flight.
      client: jsonAnswering(() => (h.podsets.put(podSet('one', { labels: { seen: 'yes' }, resourceVersion: '2' })), { metadata: { resourceVersion: '2' } })),
      discovery: { resolve: async () => PODSETS } as unknown as ResourceDiscovery,
    });
    h.podsets.put(podSet('one'));
    await h.started();
    await h.calledAndIdle(1);
    expect(await h.reconciles()).toBe(1);
    // Someone else's change afterwards is queued and called as usual.
    h.podsets.put(podSet('one', { labels: { seen: 'no' }, resourceVersion: '3' }));
    await h.calledAndIdle(2);
  });

  it('calls the controller owner of a changed child with a CHILD trigger, and sends the children it holds', async () => {
    const h = harness();
    const owner = podSet('one');
    h.podsets.put(owner);
    await h.started();
    await vi.waitFor(() => expect(h.calls).toHaveLength(1));
    h.pods.put(pod('one-x', owner));
    await vi.waitFor(() => expect(h.calls).toHaveLength(2));
    expect(h.calls[1]?.request.trigger).toEqual({ type: 'CHILD', child: { apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'one-x' } });
    expect(h.calls[1]?.request.children['Pod.v1']?.map((p) => p.metadata?.name)).toEqual(['one-x']);
  });

  it('ignores a child whose controller is not a primary it has', async () => {
    const h = harness();
    await h.started();
    h.pods.put(pod('orphan', podSet('missing')));
    expect(h.runner.stats().pendingKeys).toBe(0);
  });

  it('leaves out primaries outside its namespaces or its selector', async () => {
    const h = harness({ namespaces: ['a'], selector: { matchLabels: { tier: 'front' } } });
    await h.started();
    h.podsets.put(podSet('elsewhere', { namespace: 'b', labels: { tier: 'front' } }));
    h.podsets.put(podSet('unlabelled'));
    expect(h.runner.stats().pendingKeys).toBe(0);
    h.podsets.put(podSet('front', { labels: { tier: 'front' } }));
    await vi.waitFor(() => expect(h.callsFor('front')).toHaveLength(1));
    expect(h.calls).toHaveLength(1);
  });

  it('with ignoreStatusChanges, calls again for a new generation but not for a status-only update', async () => {
    const h = harness({ ignoreStatusChanges: true });
    h.podsets.put(podSet('one'));
    await h.started();
    await h.calledAndIdle(1);
    h.podsets.put(podSet('one', { resourceVersion: '2', status: { ready: 1 } }));
    expect(h.runner.stats().pendingKeys).toBe(0);
    h.podsets.put(podSet('one', { resourceVersion: '3', generation: 2 }));
    await vi.waitFor(() => expect(h.calls).toHaveLength(2));
    expect(h.calls[1]?.request.trigger.type).toBe('MODIFIED');
  });

  it('sends a deleted primary, with its last state and trigger DELETED, when the Loop sends deletes', async () => {
    const h = harness({ sendDeletes: true });
    const one = podSet('one', { labels: { last: 'state' } });
    h.podsets.put(one);
    await h.started();
    await vi.waitFor(() => expect(h.calls).toHaveLength(1));
    h.podsets.remove(one);
    await vi.waitFor(() => expect(h.calls).toHaveLength(2));
    expect(h.calls[1]?.request).toMatchObject({ trigger: { type: 'DELETED' }, object: { metadata: { name: 'one', labels: { last: 'state' } } } });
  });

  it('does not call about a deleted primary when the Loop does not send deletes', async () => {
    const h = harness();
    const one = podSet('one');
    h.podsets.put(one);
    await h.started();
    await h.calledAndIdle(1);
    h.podsets.remove(one);
    expect(h.runner.stats().pendingKeys).toBe(0);
    await settle();
    expect(h.calls).toHaveLength(1);
  });

  it('reports Running once its caches are complete, and Forbidden when a watch is refused', async () => {
    const h = harness();
    await h.started();
    expect(h.health.at(-1)).toEqual({ ready: true, reason: 'Running', message: 'watching' });
    h.pods.restart('gone');
    expect(h.health).toHaveLength(1);
    h.pods.restart('error', new KubeApiError(403, 'Forbidden', 'pods is forbidden', { method: 'GET', path: '/api/v1/pods' }));
    expect(h.health.at(-1)).toMatchObject({ ready: false, reason: 'Forbidden', message: expect.stringContaining('pods is forbidden') });
  });

  it('sends nothing while its function reference does not resolve, and every primary once it does', async () => {
    const h = harness({ function: { ref: { name: 'fn', namespace: 'fns', port: 8080 } } });
    h.podsets.put(podSet('one'));
    h.podsets.put(podSet('two'));
    await h.started();
    expect(h.health.at(-1)).toMatchObject({ ready: false, reason: 'FunctionRefNotFound' });
    h.services.put({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'fn', namespace: 'fns', resourceVersion: '1' }, spec: { ports: [{ port: 8080 }] } } as KubeObject);
    await vi.waitFor(() => expect(h.calls).toHaveLength(2));
    expect(h.calls.map((c) => c.url)).toEqual(['http://fn.fns.svc.cluster.local:8080/', 'http://fn.fns.svc.cluster.local:8080/']);
    expect(h.health.at(-1)).toMatchObject({ ready: true, reason: 'Running' });
  });

  it('releases every informer on stop and queues nothing afterwards', async () => {
    const h = harness();
    await h.started();
    expect(h.informers.held).toBe(2);
    await h.runner.stop();
    expect(h.informers.held).toBe(0);
    h.podsets.put(podSet('late'));
    expect(h.runner.stats().pendingKeys).toBe(0);
  });

  it('fails to start, holding no informer, when a kind it owns is not served', async () => {
    const h = harness({ owns: [{ apiVersion: 'example.com/v1', kind: 'Widget' }] });
    await expect(h.runner.start()).rejects.toThrow(/unknown kind Widget/);
    expect(h.informers.held).toBe(0);
  });

  it('keeps what a settled answer required: the next call carries it in its first round, a change of it calls again, and an answer without it stops the watch', async () => {
    const SECRETS = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true };
    const db = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'a', uid: 'uid-db', resourceVersion: '1' } } as KubeObject;
    let ask = true;
    const api = {
      client: { getIfExists: async ({ path }: { path: string }) => (path === '/api/v1/namespaces/a/secrets/db' ? db : undefined) } as unknown as KubeClient,
      discovery: { resolve: async () => SECRETS } as unknown as ResourceDiscovery,
    };
    const h = harness({}, () => (ask ? { requires: [{ name: 'credentials', apiVersion: 'v1', kind: 'Secret', names: ['db'] }] } : {}), api);
    h.informers.serve(SECRETS);
    h.podsets.put(podSet('one'));
    await h.started();
    // The first answer asks for the Secret: a second round carries it, and that answer settles.
    await h.calledAndIdle(2);
    expect(h.calls.map((c) => c.request.related)).toEqual([undefined, { credentials: [db] }]);
    // The runner watches what was required (podsets, pods and now secrets).
    await vi.waitFor(() => expect(h.informers.held).toBe(3));
    h.informers.of('v1', 'Secret').put({ ...db, metadata: { ...db.metadata, resourceVersion: '2' } });
    await h.calledAndIdle(3);
    expect(h.calls[2]?.request).toMatchObject({ trigger: { type: 'RELATED', related: { name: 'credentials' } }, related: { credentials: [db] } });
    // An answer that no longer asks settles on nothing: one more round without it, and the watch is released.
    ask = false;
    h.podsets.put(podSet('one', { resourceVersion: '2', generation: 2 }));
    await h.calledAndIdle(5);
    expect(h.calls[3]?.request.related).toEqual({ credentials: [db] });
    expect(h.calls[4]?.request.related).toBeUndefined();
    await vi.waitFor(() => expect(h.informers.held).toBe(2));
  });
});
