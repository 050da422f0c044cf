// AccessReviewSchedule.stop() while start() is still under way: it waits for the RBAC watch's start (its
// SelfSubjectAccessReviews, then its informers) and stops the watch, so nothing of it outlives the client the router
// closes next (such a request, cut by the close, once ended a webhook with an uncaught error).
import { pino } from 'pino';
import { expect, it } from 'vitest';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { MemoryInformers, RBAC_RESOURCES } from '../../test/support/memory-informers.ts';
import { AccessReviewSchedule } from './access-review-schedule.ts';

it('stop() during start() resolves only once the RBAC watch has started and stopped: no review in flight, no informer held', async () => {
  // The reviews the watch asks first (list and watch of 4 kinds), answered when the test says.
  const answers: Array<() => void> = [];
  let asked: () => void = () => {};
  const allAsked = new Promise<void>((resolve) => (asked = resolve));
  let inFlight = 0;
  const request = () =>
    new Promise((resolve) => {
      inFlight++;
      answers.push(() => (inFlight--, resolve({ status: { allowed: true } })));
      if (answers.length === 8) asked();
    });
  const registry = new MemoryInformers(RBAC_RESOURCES);
  const schedule = new AccessReviewSchedule({ registry, client: { request } as unknown as KubeClient, logger: pino({ level: 'silent' }), watch: true, sweep: () => {}, changed: () => {} });
  const starting = schedule.start();
  await allAsked;
  let stopped = false;
  const stopping = schedule.stop().then(() => ((stopped = true), { inFlight, held: registry.held }));
  // All that can run without an answer has run: stop() still waits for the reviews.
  await new Promise((resolve) => setImmediate(resolve));
  expect(stopped).toBe(false);
  for (const answer of answers.splice(0)) answer();
  expect(await stopping).toEqual({ inFlight: 0, held: 0 });
  await starting;
  expect(registry.held).toBe(0);
});

it("asks for the RBAC kinds' discovery while its own access review is unanswered, and watches nothing before it allows", async () => {
  const answers: Array<() => void> = [];
  const request = () => new Promise((resolve) => answers.push(() => resolve({ status: { allowed: true } })));
  const memory = new MemoryInformers(RBAC_RESOURCES);
  const resolved: string[] = [];
  const acquired: string[] = [];
  const registry = {
    resolve: async (ref: { kind: string }) => (resolved.push(ref.kind), RBAC_RESOURCES.find((r) => r.kind === ref.kind)!),
    acquire: (...args: Parameters<MemoryInformers['acquire']>) => (acquired.push(args[0].kind), memory.acquire(...args)),
  };
  const schedule = new AccessReviewSchedule({ registry, client: { request } as unknown as KubeClient, logger: pino({ level: 'silent' }), watch: true, sweep: () => {}, changed: () => {} });
  const starting = schedule.start();
  await new Promise((resolve) => setImmediate(resolve));
  // The discovery the watches need left with the review: the watches follow its answer without another round trip.
  expect({ resolved, acquired }).toEqual({ resolved: ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'], acquired: [] });
  for (const answer of answers.splice(0)) answer();
  await starting;
  expect(acquired).toEqual(['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);
  await schedule.stop();
});
