// The sharded-router e2e scenarios, run on the current control plane (the API server filters each member's
// share: server-side sharded list and watch) and on the oldest supported one (members filter themselves):
// three `kubeloop router --sharding` processes split 2,000 ConfigMaps, each change reconciled once; a member
// killed with SIGKILL mid-run has its keys taken over with nothing lost and no key called by two members at
// once; a new member takes its share; PodSets never overshoot in handovers.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import type { Informer } from '../../lib/kube/informer.ts';
import { shardSlot } from '../../lib/kube/shard-selector.ts';
import { MemberSet } from '../../router/sharding/member-set.ts';
import type { OwnPlane } from '../cluster/suite.ts';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, installCrds, routerHarness, watchPods, type RouterHarness } from '../support/router-harness.ts';
import { pool } from '../../bench/router-bench-kit.ts';
import { agreed, memberLeases, serveRecordingFunction, startMemberProcess, type RecordingFunction } from '../support/shard-kit.ts';

const OBJECTS = 2000;
const GROUP = 'shard-e2e';
const LOOP = 'configmaps';
const PODSETS = 12;

export interface ShardingScenarios {
  suite: string;
  /** What the members must report on their Leases: `server` where the API server filters, else `client`. */
  mode: 'server' | 'client';
  /** A control plane of the suite's own (the oldest supported version); the shared one when omitted. */
  plane?: () => Promise<OwnPlane & { stop(): Promise<void> }>;
}

export function shardingScenarios(o: ShardingScenarios): void {
  let h: RouterHarness;
  let plane: (OwnPlane & { stop(): Promise<void> }) | undefined;
  let ns: string;
  let client: KubeClient;
  let recorder: RecordingFunction;
  let podsetUrl: string;
  let dir: string;
  const members = new Map<string, ChildProcess>();
  /** The resourceVersion each ConfigMap has now, as our own writes returned it, and each one's uid. */
  const current = new Map<string, string>();
  const uids = new Map<string, string>();
  const names = Array.from({ length: OBJECTS }, (_, i) => `cm-${String(i).padStart(4, '0')}`);
  /** A key's owner: the member owning the slot of the ConfigMap's uid (as the API server hashes it). */
  const ownerOf = (view: MemberSet, key: string) => view.owner(shardSlot(uids.get(key) ?? ''));

  function startMember(identity: string): void {
    const loops = [
      inlineLoop(LOOP, ns, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, function: { url: recorder.url(identity) } }),
      inlineLoop('podsets', ns, { for: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet' }, owns: [{ apiVersion: 'v1', kind: 'Pod' }], ignoreStatusChanges: true, function: { url: podsetUrl } }),
    ];
    members.set(identity, startMemberProcess({ identity, kubeconfig: h.suite.kubeconfigPath, dir, loops, leaseNamespace: ns, group: GROUP, leaseDurationSeconds: 8 }));
  }

  const viewOf = (ids: string[]) => eventually(`members ${ids.join(',')} agree on one view`, () => agreed(h.client, ns, GROUP, ids), 90_000);

  /** The member's ConfigMap share as its own metrics show it: objects cached and cache events received. */
  async function shareMetrics(identity: string): Promise<{ cached: number; events: number }> {
    const started = readFileSync(join(dir, `${identity}.log`), 'utf8').split('\n').find((l) => l.includes('"router started"'));
    const ops = started ? (JSON.parse(started) as { ops: string }).ops : undefined;
    if (!ops) throw new Error(`member ${identity} has not logged its ops URL`);
    const text = await (await fetch(`${ops}/metrics`)).text();
    const value = (metric: string) => Number(new RegExp(`^${metric}\\{resource="ConfigMap\\.v1 \\(share\\)"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
    return { cached: value('kubeloop_router_watched_objects'), events: value('kubeloop_router_informer_events_total') };
  }

  async function writeAll(version: number): Promise<void> {
    await pool(0, names.length, 16, async (i) => {
      const name = names[i]!;
      const body = { metadata: { name, namespace: ns }, data: { version: String(version) } };
      const cm = version === 0
        ? await client.request<V1ConfigMap>({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body })
        : await client.request<V1ConfigMap>({ method: 'PUT', path: `/api/v1/namespaces/${ns}/configmaps/${name}`, body });
      current.set(`${ns}/${name}`, cm.metadata?.resourceVersion ?? '');
      uids.set(`${ns}/${name}`, cm.metadata?.uid ?? '');
    });
  }

  /** Every ConfigMap's current resourceVersion has been called for. */
  function converged(since: number): Promise<true> {
    return eventually('every change reconciled', async () => {
      const called = new Set(recorder.calls.filter((c) => c.loop === LOOP && c.at >= since).map((c) => `${c.key}@${c.resourceVersion}`));
      const missing = [...current].filter(([key, rv]) => !called.has(`${key}@${rv}`));
      return missing.length === 0;
    }, 120_000);
  }

  /** Calls of the ConfigMap Loop since a moment, grouped by key@resourceVersion. */
  function callsSince(since: number): Map<string, Array<{ member: string; trigger: string }>> {
    const byChange = new Map<string, Array<{ member: string; trigger: string }>>();
    for (const c of recorder.calls) {
      if (c.loop !== LOOP || c.at < since) continue;
      const id = `${c.key}@${c.resourceVersion}`;
      byChange.set(id, [...(byChange.get(id) ?? []), { member: c.member, trigger: c.trigger }]);
    }
    return byChange;
  }

  beforeAll(async () => {
    plane = await o.plane?.();
    h = await routerHarness(o.suite, plane);
    ns = h.suite.namespace;
    client = await KubeClient.fromKubeConfig(h.suite.kubeConfig, { rateLimit: { qps: 1000, burst: 1000 } });
    await installCrds(h.client, ['podsets.app.kubeloop.dev.yaml']);
    recorder = await serveRecordingFunction();
    podsetUrl = (await h.serve('podset')).url;
    dir = mkdtempSync(join(tmpdir(), 'router-sharding-'));
    const rootCa = await client.request<V1ConfigMap>({ path: `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt` });
    uids.set(`${ns}/kube-root-ca.crt`, rootCa.metadata?.uid ?? '');
    for (const id of ['a', 'b', 'c']) startMember(id);
    await viewOf(['a', 'b', 'c']);
    // A cold build of the oldest API server (.ci/run builds it beforehand) takes half an hour on 2 cores.
  }, 45 * 60_000);

  afterAll(async () => {
    for (const child of members.values()) child.kill('SIGKILL');
    await recorder?.close();
    await client?.close();
    await h?.close();
    await plane?.stop();
  });

  describe(`sharded routers (${o.mode}-side filtering)`, () => {
    it('reconcile 2,000 objects exactly once each, every key by the owner of its uid\'s slot; each member receives its share', async () => {
      const since = Date.now();
      await writeAll(0);
      await converged(since);
      const view = new MemberSet(['a', 'b', 'c']);
      const byChange = callsSince(since);
      const perMember = new Map<string, number>();
      for (const [id, calls] of byChange) {
        const key = id.slice(0, id.lastIndexOf('@'));
        expect(calls, id).toHaveLength(1);
        expect(calls[0]!.member, id).toBe(ownerOf(view, key));
        perMember.set(calls[0]!.member, (perMember.get(calls[0]!.member) ?? 0) + 1);
      }
      for (const n of perMember.values()) expect(n).toBeGreaterThan(OBJECTS * 0.25);
      expect(recorder.overlaps).toEqual([]);
      // The member Leases show each member's share (kubectl get leases -L kubeloop.dev/shard-keys), counting
      // the namespace's own kube-root-ca.crt ConfigMap, and who filters it.
      const share = (id: string) => [...uids.keys()].filter((k) => ownerOf(view, k) === id).length;
      await eventually('shares on the Leases', async () => {
        const leases = await memberLeases(h.client, ns, GROUP);
        return leases.length === 3 && leases.every((l) => l.keys === share(l.identity) && l.mode === o.mode);
      });
      for (const id of ['a', 'b', 'c']) {
        const { cached, events } = await shareMetrics(id);
        if (o.mode === 'server') {
          // The API server sent this member its share only: a third of the objects, not all of them.
          expect(cached, id).toBe(share(id));
          expect(events, id).toBeGreaterThanOrEqual(share(id));
          expect(events, id).toBeLessThan(OBJECTS / 2);
        } else {
          // An API server without sharded list and watch sends every member everything.
          expect(cached, id).toBe(OBJECTS + 1);
          expect(events, id).toBeGreaterThanOrEqual(OBJECTS + 1);
        }
      }
    }, 180_000);

    it('take over the keys of a member killed mid-run: nothing lost, no key called by two members at once', async () => {
      const since = Date.now();
      const writing = writeAll(1);
      await eventually('a quarter of the changes reconciled', async () => callsSince(since).size > OBJECTS / 4, 60_000);
      members.get('b')!.kill('SIGKILL');
      const killedAt = Date.now();
      await writing;
      await converged(since);
      const before = new MemberSet(['a', 'b', 'c']);
      const after = new MemberSet(['a', 'c']);
      for (const [id, calls] of callsSince(since)) {
        const key = id.slice(0, id.lastIndexOf('@'));
        // Only b's keys may be called twice for one change: by b before it died, then by its successor.
        if (ownerOf(before, key) !== 'b') expect(calls, id).toEqual([{ member: ownerOf(before, key), trigger: 'MODIFIED' }]);
        else expect(calls.filter((c) => c.member !== 'b').every((c) => c.member === ownerOf(after, key)), id).toBe(true);
      }
      const takenOver = recorder.calls.filter((c) => c.at > killedAt && c.loop === LOOP && ownerOf(before, c.key) === 'b' && c.member !== 'b');
      expect(takenOver.length).toBeGreaterThan(0);
      expect(recorder.overlaps).toEqual([]);
      await viewOf(['a', 'c']);
    }, 180_000);

    it('rebalance onto a new member, moving only the keys it wins', async () => {
      const joined = Date.now();
      startMember('d');
      await viewOf(['a', 'c', 'd']);
      const before = new MemberSet(['a', 'c']);
      const after = new MemberSet(['a', 'c', 'd']);
      // d takes its keys over from the cache (level-triggered); nobody else is called for anything.
      const won = names.map((n) => `${ns}/${n}`).filter((k) => ownerOf(after, k) === 'd');
      await eventually('d called for each key it won', async () => {
        const called = new Set(recorder.calls.filter((c) => c.at >= joined && c.member === 'd').map((c) => c.key));
        return won.every((k) => called.has(k));
      });
      expect(recorder.calls.filter((c) => c.at >= joined && c.loop === LOOP && c.member !== 'd')).toEqual([]);
      const since = Date.now();
      await writeAll(2);
      await converged(since);
      for (const [id, calls] of callsSince(since)) {
        const key = id.slice(0, id.lastIndexOf('@'));
        expect(calls.map((c) => c.member), id).toEqual([ownerOf(after, key)]);
      }
      const moved = names.filter((n) => ownerOf(before, `${ns}/${n}`) !== ownerOf(after, `${ns}/${n}`));
      expect(moved.every((n) => ownerOf(after, `${ns}/${n}`) === 'd')).toBe(true);
      expect(recorder.overlaps).toEqual([]);
    }, 180_000);

    it('never let a PodSet exceed spec.replicas while members die and join', async () => {
      const pods: Informer<V1Pod> = await watchPods(h.client, ns);
      const path = `/apis/app.kubeloop.dev/v1alpha1/namespaces/${ns}/podsets`;
      const replicas = new Map<string, number>();
      const overshoots: string[] = [];
      const live = (owner: string) => pods.store.list().filter((p) => !p.metadata?.deletionTimestamp && p.metadata?.ownerReferences?.some((r) => r.controller && r.uid === owner)).length;
      const check = (pod: V1Pod) => {
        const owner = pod.metadata?.ownerReferences?.find((r) => r.controller);
        if (!owner) return;
        const n = live(owner.uid);
        if (n > (replicas.get(owner.uid) ?? 0)) overshoots.push(`${owner.name}: ${n} pods`);
      };
      pods.on('add', check);
      pods.on('update', check);
      try {
        const sets = await Promise.all(Array.from({ length: PODSETS }, async (_, i) => {
          const ps = await h.client.request<{ metadata: { uid: string; name: string } }>({ method: 'POST', path, body: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: `ps-${i}` }, spec: { replicas: 1 } } });
          replicas.set(ps.metadata.uid, 1);
          return ps.metadata;
        }));
        const settledAt = (n: number) => eventually(`every PodSet at ${n} pods`, async () => sets.every((s) => live(s.uid) === n), 120_000);
        await settledAt(1);
        // Scale up while one member dies and another joins: both hand PodSets over.
        for (const s of sets) replicas.set(s.uid, 4);
        members.get('c')!.kill('SIGKILL');
        await Promise.all(sets.map((s) => h.client.request({ method: 'PATCH', path: `${path}/${s.name}`, contentType: 'application/merge-patch+json', body: { spec: { replicas: 4 } } })));
        startMember('e');
        await settledAt(4);
        await viewOf(['a', 'd', 'e']);
        expect(overshoots).toEqual([]);
        // Stable at spec.replicas once the members agree: nothing created twice after the handover.
        await new Promise((r) => setTimeout(r, 2000));
        expect(sets.map((s) => live(s.uid))).toEqual(sets.map(() => 4));
        expect(overshoots).toEqual([]);
      } finally {
        await pods.stop();
      }
    }, 240_000);
  });
}
