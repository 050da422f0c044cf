import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { V1Lease } from '@kubernetes/client-node';
import { KubeApiError, type KubeClient, type KubeRequest } from '../../lib/kube/kube-client.ts';
import { createMetricsRegistry } from '../../lib/observability/metrics.ts';
import { MemberSet } from './member-set.ts';
import { shardSlot } from '../../lib/kube/shard-selector.ts';
import { ShardMember } from './shard-member.ts';
import { createShardMetrics } from './shard-metrics.ts';

/** Leases in memory, answering ShardMember's requests as kube-apiserver would (resourceVersion conflicts). */
class LeaseStore {
  readonly leases = new Map<string, V1Lease>();
  readonly down = new Set<string>();
  #rv = 0;
  client(identity: string): KubeClient {
    const request = async (r: KubeRequest): Promise<unknown> => {
      if (this.down.has(identity)) throw new Error('connection refused');
      const name = /\/leases\/([^/?]+)$/.exec(r.path)?.[1];
      const method = r.method ?? 'GET';
      if (!name && method === 'GET') return { items: [...this.leases.values()] };
      const body = r.body as V1Lease;
      if (method === 'POST') return this.#write(body.metadata!.name!, body);
      const live = this.leases.get(name!);
      if (!live) throw new KubeApiError(404, 'NotFound', 'not found', { method, path: r.path });
      if (method === 'GET') return live;
      if (method === 'DELETE') return this.leases.delete(name!);
      if (body.metadata?.resourceVersion !== live.metadata?.resourceVersion) throw new KubeApiError(409, 'Conflict', 'conflict', { method, path: r.path });
      return this.#write(name!, body);
    };
    return { request } as unknown as KubeClient;
  }
  #write(name: string, lease: V1Lease): V1Lease {
    const stored = { ...lease, metadata: { ...lease.metadata, name, resourceVersion: String(++this.#rv) } };
    this.leases.set(name, stored);
    return stored;
  }
}

/** Keys and the slots of their primaries' uids (ownership goes by slot). */
const slotOf = new Map(Array.from({ length: 200 }, (_, i) => [`ns/o-${i}`, shardSlot(`uid-${i}`)]));
const keys = [...slotOf.keys()];
const slot = (key: string) => slotOf.get(key)!;
const both = new MemberSet(['a', 'b']);
let store: LeaseStore;
const members: ShardMember[] = [];

function member(identity: string): ShardMember {
  const m = new ShardMember({
    client: store.client(identity),
    namespace: 'ns',
    group: 'g',
    identity,
    leaseDurationMs: 3000,
    renewDeadlineMs: 2000,
    retryPeriodMs: 200,
    logger: pino({ level: 'silent' }),
    metrics: createShardMetrics(createMetricsRegistry()),
  });
  m.start();
  members.push(m);
  return m;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
  store = new LeaseStore();
});
afterEach(async () => {
  store.down.clear();
  await Promise.all(members.splice(0).map((m) => m.stop()));
  vi.useRealTimers();
});

describe('ShardMember', () => {
  it('hands a key to a joining member only after the old owner finished its call', async () => {
    const a = member('a');
    await vi.advanceTimersByTimeAsync(1000);
    expect(keys.every((k) => a.owns('l', k, slot(k)))).toBe(true);
    const moving = keys.find((k) => both.owner(slot(k)) === 'b')!;
    const release = a.begin('l', moving, slot(moving))!;
    const b = member('b');
    await vi.advanceTimersByTimeAsync(2000);
    // a stopped taking the key, b may not start it while a's call runs.
    expect(a.owns('l', moving, slot(moving))).toBe(false);
    expect(b.owns('l', moving, slot(moving))).toBe(false);
    release();
    await vi.advanceTimersByTimeAsync(1000);
    expect(b.owns('l', moving, slot(moving))).toBe(true);
    expect(keys.every((k) => a.owns('l', k, slot(k)) !== b.owns('l', k, slot(k)))).toBe(true);
  });

  it('members started together never ask the API server for more than their share in the view they settle on', async () => {
    const asked = new Map<string, Array<string | undefined>>();
    const watchShare = (m: ShardMember) => {
      const list: Array<string | undefined> = [];
      asked.set(m.identity, list);
      m.share!.onChange(() => list.push(m.share!.request()?.selector));
    };
    // a's first round sees only itself; b's Lease appears before a's second round.
    const a = member('a');
    watchShare(a);
    await vi.advanceTimersByTimeAsync(50);
    const b = member('b');
    watchShare(b);
    await vi.advanceTimersByTimeAsync(2000);
    for (const m of [a, b]) {
      const share = both.slotsOf(m.identity);
      // One selector each, the two-member one: no list of the whole collection first.
      expect(asked.get(m.identity)).toEqual([m.share!.request()?.selector]);
      expect(keys.filter((k) => m.share!.request()!.contains({ metadata: { uid: `uid-${k.slice('ns/o-'.length)}` } })).every((k) => share.includes(slot(k)))).toBe(true);
    }
    expect(keys.every((k) => a.owns('l', k, slot(k)) !== b.owns('l', k, slot(k)))).toBe(true);
  });

  it('starts nothing once it cannot renew, and the other takes its keys after the lease expires', async () => {
    const a = member('a');
    const b = member('b');
    await vi.advanceTimersByTimeAsync(2000);
    const ofA = keys.filter((k) => both.owner(slot(k)) === 'a');
    expect(ofA.every((k) => a.owns('l', k, slot(k)) && !b.owns('l', k, slot(k)))).toBe(true);
    store.down.add('a');
    await vi.advanceTimersByTimeAsync(2500);
    // Fenced before b may judge its Lease expired: nobody runs a's keys for a while.
    expect(ofA.some((k) => a.owns('l', k, slot(k)))).toBe(false);
    await vi.advanceTimersByTimeAsync(3000);
    expect(ofA.every((k) => b.owns('l', k, slot(k)))).toBe(true);
    expect(a.status().fenced).toBe(true);
  });

  it('after a fence, queues again only the keys it refused meanwhile', async () => {
    const a = member('a');
    const b = member('b');
    await vi.advanceTimersByTimeAsync(2000);
    const ofA = keys.filter((k) => both.owner(slot(k)) === 'a');
    const queued: string[] = [];
    a.onGained('l', (gained) => {
      const now = keys.filter((k) => gained(slot(k), k));
      queued.push(...now);
      return now.length;
    });
    store.down.add('a');
    await vi.advanceTimersByTimeAsync(2300);
    expect(a.owns('l', ofA[0]!, slot(ofA[0]!))).toBe(false);
    store.down.clear();
    await vi.advanceTimersByTimeAsync(1000);
    expect(ofA.every((k) => a.owns('l', k, slot(k)))).toBe(true);
    expect(queued).toEqual([ofA[0]]);
    expect(keys.every((k) => a.owns('l', k, slot(k)) !== b.owns('l', k, slot(k)))).toBe(true);
  });
});
