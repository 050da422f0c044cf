import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiError, type KubeClient, type KubeRequest } from '../lib/kube/kube-client.ts';
import { LeaderElector } from './leader-election.ts';

/** One Lease in memory with optimistic concurrency; `hang` makes every request take a second, then fail. */
function leaseServer() {
  let lease: { metadata: { resourceVersion: string }; spec: Record<string, unknown> } | undefined;
  let version = 0;
  const state = { hang: false, puts: 0 };
  const request = async (r: KubeRequest): Promise<unknown> => {
    if (state.hang) return new Promise((_, reject) => setTimeout(() => reject(new Error('headers timeout')), 1000));
    if ((r.method ?? 'GET') === 'GET') {
      if (!lease) throw new KubeApiError(404, 'NotFound', 'no lease', { method: 'GET', path: r.path });
      return structuredClone(lease);
    }
    const body = r.body as { metadata?: { resourceVersion?: string }; spec: Record<string, unknown> };
    if (r.method === 'PUT') {
      state.puts += 1;
      if (body.metadata?.resourceVersion !== lease?.metadata.resourceVersion) throw new KubeApiError(409, 'Conflict', 'changed', { method: 'PUT', path: r.path });
    }
    lease = { metadata: { resourceVersion: String(++version) }, spec: body.spec };
    return lease;
  };
  return { client: { request } as unknown as KubeClient, state };
}

const electors: LeaderElector[] = [];
afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
});

const until = async (what: () => boolean, ms = 2000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('LeaderElector', () => {
  const timing = { leaseDurationMs: 300, renewDeadlineMs: 200, retryPeriodMs: 20 };

  it('keeps renewing the lease while onStartedLeading is still waiting (e.g. for a cache)', async () => {
    const { client, state } = leaseServer();
    let stopped = 0;
    const elector = new LeaderElector({ client, namespace: 'k', name: 'l', identity: 'a', ...timing, onStartedLeading: () => new Promise(() => {}), onStoppedLeading: () => void stopped++ });
    electors.push(elector);
    elector.start();
    await until(() => state.puts >= 15);
    expect(elector.isLeader).toBe(true);
    expect(stopped).toBe(0);
  });

  it('steps down at the renew deadline while a renewal still hangs', async () => {
    const { client, state } = leaseServer();
    let stoppedAt: number | undefined;
    const elector = new LeaderElector({ client, namespace: 'k', name: 'l', identity: 'a', ...timing, onStartedLeading: () => {}, onStoppedLeading: () => void (stoppedAt = Date.now()) });
    electors.push(elector);
    elector.start();
    await until(() => elector.isLeader && state.puts >= 1);
    const hungAt = Date.now();
    state.hang = true;
    await until(() => stoppedAt !== undefined);
    expect(elector.isLeader).toBe(false);
    // While the renewal is still hanging (it fails only 1 s after it was sent), not when it finally returns.
    expect(stoppedAt! - hungAt).toBeLessThan(1000);
  });

  it('starts a new term only after the last one has stopped', async () => {
    const { client, state } = leaseServer();
    const events: string[] = [];
    let finishStop: () => void = () => {};
    const elector = new LeaderElector({
      client,
      namespace: 'k',
      name: 'l',
      identity: 'a',
      ...timing,
      onStartedLeading: () => void events.push('start'),
      onStoppedLeading: () => {
        if (events.includes('stopping')) return; // the test's own stop at the end
        events.push('stopping');
        return new Promise<void>((resolve) => (finishStop = () => (events.push('stopped'), resolve())));
      },
    });
    electors.push(elector);
    elector.start();
    await until(() => events.includes('start'));
    state.hang = true;
    await until(() => events.includes('stopping'));
    state.hang = false;
    // The lease is won back while the old term still stops: the new term waits for it.
    await until(() => elector.isLeader, 3000);
    await new Promise((r) => setTimeout(r, 100));
    expect(events).toEqual(['start', 'stopping']);
    finishStop();
    await until(() => events.length === 4);
    expect(events).toEqual(['start', 'stopping', 'stopped', 'start']);
  });
});
