// Related objects with sharded routers: two `kubeloop router --sharding` members, each indexing every
// Deployment from its own shared caches; a ConfigMap change calls each Deployment naming it exactly once,
// by the member that owns that Deployment, and none of the others (docs/sharding.md, "Related objects").
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberSet } from '../../router/sharding/member-set.ts';
import { shardSlot } from '../../lib/kube/shard-selector.ts';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { agreed, serveRecordingFunction, startMemberProcess, type RecordingFunction } from '../support/shard-kit.ts';

const GROUP = 'related-shards';
const LOOP = 'reloaders';
const MEMBERS = ['a', 'b'];
const DEPLOYMENTS = 16;

let h: RouterHarness;
let ns: string;
let recorder: RecordingFunction;
const members: ChildProcess[] = [];
const named = (i: number) => (i % 2 === 0 ? 'shared' : 'other');

beforeAll(async () => {
  h = await routerHarness('router-related-sharding');
  ns = h.suite.namespace;
  recorder = await serveRecordingFunction();
  const dir = mkdtempSync(join(tmpdir(), 'router-related-sharding-'));
  for (const identity of MEMBERS) {
    const loop = inlineLoop(LOOP, ns, {
      for: { apiVersion: 'apps/v1', kind: 'Deployment' },
      ignoreStatusChanges: true,
      related: [{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: 'kubeloop.dev/config-map' } }],
      function: { url: recorder.url(identity) },
    });
    members.push(startMemberProcess({ identity, kubeconfig: h.suite.kubeconfigPath, dir, loops: [loop], leaseNamespace: ns, group: GROUP, leaseDurationSeconds: 8 }));
  }
  await eventually('members agree on one view', () => agreed(h.client, ns, GROUP, MEMBERS), 90_000);
}, 120_000);

afterAll(async () => {
  for (const child of members) child.kill('SIGKILL');
  await recorder?.close();
  await h?.close();
});

describe('sharded routers with related objects', () => {
  it('call each Deployment naming a changed ConfigMap once, by its owner, and no other Deployment', async () => {
    for (const name of ['shared', 'other']) await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name }, data: { v: '1' } } });
    const uids = new Map<string, string>();
    for (let i = 0; i < DEPLOYMENTS; i++) {
      const labels = { app: `d${i}` };
      const created = await h.client.request<{ metadata: { uid: string } }>({
        method: 'POST',
        path: `/apis/apps/v1/namespaces/${ns}/deployments`,
        body: { metadata: { name: `d${i}`, annotations: { 'kubeloop.dev/config-map': named(i) } }, spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'x' }] } } } },
      });
      uids.set(`${ns}/d${i}`, created.metadata.uid);
    }
    await eventually('every Deployment called', async () => new Set(recorder.calls.filter((c) => c.loop === LOOP).map((c) => c.key)).size === DEPLOYMENTS, 60_000);

    const since = Date.now();
    await h.client.request({ method: 'PUT', path: `/api/v1/namespaces/${ns}/configmaps/shared`, body: { metadata: { name: 'shared' }, data: { v: '2' } } });
    const relatedCalls = () => recorder.calls.filter((c) => c.loop === LOOP && c.at >= since && c.trigger === 'RELATED');
    await eventually('the Deployments naming it called', async () => relatedCalls().length >= DEPLOYMENTS / 2, 60_000);

    const view = new MemberSet(MEMBERS);
    const expected = Array.from({ length: DEPLOYMENTS }, (_, i) => i)
      .filter((i) => named(i) === 'shared')
      .map((i) => `${ns}/d${i}`);
    const calls = relatedCalls();
    expect(calls.map((c) => c.key).sort()).toEqual(expected.sort());
    // Each by the owner of its primary's slot (the slot of the Deployment's uid).
    for (const call of calls) expect(call.member, call.key).toBe(view.owner(shardSlot(uids.get(call.key) ?? '')));
    expect(recorder.overlaps).toEqual([]);
  }, 180_000);
});
