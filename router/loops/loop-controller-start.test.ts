// The Loop controller's start sequence: a Loop's watches open without waiting for the RBAC watch's round trips or
// its own access review, while its review still waits for the RBAC watch and its first call for the review.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import type { KubeClient, KubeRequest } from '../../lib/kube/kube-client.ts';
import { harness, loopObject, stopControllers, WAIT } from '../../test/support/loop-controller-harness.ts';

afterEach(stopControllers);

const podset = { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'web', namespace: 'a', uid: 'uid-web', resourceVersion: '1' } } as unknown as KubeObject;

/** A client whose SelfSubjectAccessReviews (the RBAC watch's) are answered, allowed, only when the test says. */
function heldSelfReviews() {
  const held: Array<() => void> = [];
  const request = async (r: KubeRequest) => {
    if (!r.path.endsWith('/selfsubjectaccessreviews')) return {};
    await new Promise<void>((resolve) => held.push(resolve));
    return { status: { allowed: true } };
  };
  const answer = () => {
    for (const resolve of held.splice(0)) resolve();
  };
  return { client: { request } as unknown as KubeClient, held, answer };
}

/** Once the controller has acquired the kind's informer and subscribed: an object put now is seen. */
async function followed(h: ReturnType<typeof harness>, kind: 'ClusterLoop' | 'Loop'): Promise<void> {
  await vi.waitFor(() => expect(h.log).toContain(`acquire ${kind}`), WAIT);
  await new Promise((resolve) => setImmediate(resolve));
}

/** A promise and the hand that resolves it. */
function gate() {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('LoopController start sequence', () => {
  it("opens a Loop's primary watch before the RBAC watch's access review is answered, and asks the Loop's own review only after the RBAC watches", async () => {
    const rbac = heldSelfReviews();
    const h = harness({ watchRbac: true, client: rbac.client });
    const started = h.start();
    try {
      await followed(h, 'ClusterLoop');
      h.loopInformer.put(loopObject());
      await vi.waitFor(() => expect(h.log).toContain('acquire PodSet'), WAIT);
      expect(rbac.held.length).toBeGreaterThan(0);
      // The guard kept: a review made before the RBAC watch is asked for could miss a right revoked in between.
      expect(h.reviewed).toEqual([]);
    } finally {
      rbac.answer();
    }
    await started;
    await h.controller.waitForLoop('podset', 10_000);
    expect(h.log.indexOf('review podset')).toBeGreaterThan(h.log.indexOf('acquire ClusterRoleBinding'));
  });

  it('calls the function for no primary before the review allows the Loop, though its caches are complete', async () => {
    const h = harness();
    const review = gate();
    h.access.hold = review.promise;
    h.informers.of('app.kubeloop.dev/v1alpha1', 'PodSet').put(podset);
    await h.start();
    h.loopInformer.put(loopObject());
    try {
      // The primary and the owned pods acquired while the review is unanswered, their caches already complete.
      await vi.waitFor(() => expect(h.log).toEqual(expect.arrayContaining(['review podset', 'acquire Pod'])), WAIT);
      // Their syncs settle within this turn: only the review holds the first call now.
      await new Promise((resolve) => setImmediate(resolve));
      expect(h.log.filter((e) => e.startsWith('call'))).toEqual([]);
    } finally {
      review.open();
    }
    await vi.waitFor(() => expect(h.log).toContain('call web ADDED'), WAIT);
  });

  it('tells a primary deleted while the review is asked only once the review allows the Loop', async () => {
    const h = harness();
    const review = gate();
    h.access.hold = review.promise;
    const podsets = h.informers.of('app.kubeloop.dev/v1alpha1', 'PodSet');
    podsets.put(podset);
    await h.start();
    h.loopInformer.put(loopObject({ sendDeletes: true }));
    try {
      await vi.waitFor(() => expect(h.log).toEqual(expect.arrayContaining(['review podset', 'acquire Pod'])), WAIT);
      await new Promise((resolve) => setImmediate(resolve));
      podsets.remove(podset);
      await new Promise((resolve) => setImmediate(resolve));
      expect(h.log.filter((e) => e.startsWith('call'))).toEqual([]);
    } finally {
      review.open();
    }
    await vi.waitFor(() => expect(h.log.filter((e) => e.startsWith('call'))).toEqual(['call web DELETED']), WAIT);
  });

  it('stops the watches of a Loop its review refuses, calls nothing, and reviews it again before listing anything', async () => {
    const h = harness({ tenantLoopStarts: { qps: 0, burst: 0 } });
    h.access.denied = 'may not list podsets';
    h.informers.of('app.kubeloop.dev/v1alpha1', 'PodSet').put(podset);
    await h.start();
    h.loopInformer.put(loopObject());
    await vi.waitFor(() => expect(h.controller.health('podset')?.reason).toBe('Forbidden'), WAIT);
    // Retried with backoff (0.5 s, then 1 s): each retry reviews first and lists nothing while denied.
    await vi.waitFor(() => expect(h.reviewed.length).toBeGreaterThanOrEqual(3), { timeout: 10_000, interval: 20 });
    expect(h.log.filter((e) => e === 'acquire PodSet')).toHaveLength(1);
    expect(h.log.filter((e) => e.startsWith('call'))).toEqual([]);
    // Only the controller's own watches of ClusterLoops and Loops are still held.
    expect(h.informers.held).toBe(2);
  });

  it('starts a namespaced Loop while the ClusterLoops are still being listed', async () => {
    const h = harness();
    const started = h.controller.start();
    h.teamLoopInformer.sync();
    await followed(h, 'Loop');
    h.teamLoopInformer.put({ ...loopObject(), kind: 'Loop', metadata: { name: 'x', namespace: 'a', uid: 'uid-x', generation: 1 } } as unknown as KubeObject);
    await h.controller.waitForLoop('a/x', 10_000);
    h.loopInformer.sync();
    await started;
  });
});
