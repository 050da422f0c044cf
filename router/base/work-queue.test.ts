import { describe, expect, it, vi } from 'vitest';
import { WorkQueue, type QueueItem, type WorkQueueOptions } from './work-queue.ts';
import { FairScheduler } from './fair-scheduler.ts';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A queue recording each call's payload whose first call waits for `gate`: adds meanwhile find the key in flight. */
function firstCallHeld(options: Partial<WorkQueueOptions<number>>) {
  const gate = deferred();
  const seen: number[] = [];
  const queue = new WorkQueue<number>({
    concurrency: 4,
    process: async (item) => {
      seen.push(item.payload);
      if (seen.length === 1) await gate.promise;
    },
    ...options,
  });
  return { gate, seen, queue };
}

describe('WorkQueue', () => {
  it('coalesces adds of a waiting key into one call with the merged payload', async () => {
    const calls: Array<QueueItem<string[]>> = [];
    const gate = deferred();
    const queue = new WorkQueue<string[]>({
      concurrency: 1,
      merge: (a, b) => [...a, ...b],
      process: async (item) => {
        calls.push(item);
        if (item.key === 'blocker') await gate.promise;
      },
    });
    queue.add('blocker', []);
    queue.add('a', ['1']);
    queue.add('a', ['2']);
    expect(queue.depth).toBe(1);
    gate.resolve();
    await queue.idle();
    expect(calls.map((c) => [c.key, c.payload])).toEqual([
      ['blocker', []],
      ['a', ['1', '2']],
    ]);
  });

  it('never runs two calls for one key; an add during a call runs once afterwards', async () => {
    let running = 0;
    let maxRunning = 0;
    let calls = 0;
    const gate = deferred();
    const queue = new WorkQueue<number>({
      concurrency: 4,
      process: async () => {
        running += 1;
        calls += 1;
        maxRunning = Math.max(maxRunning, running);
        if (calls === 1) await gate.promise;
        running -= 1;
      },
    });
    queue.add('k', 1);
    queue.add('k', 2);
    queue.add('k', 3);
    expect(queue.inFlight).toBe(1);
    gate.resolve();
    await queue.idle();
    expect(maxRunning).toBe(1);
    expect(calls).toBe(2);
  });

  it('does not run a key again for an add during its call that the caller settles when the call ends', async () => {
    const settled: Array<[string, number]> = [];
    // Settles payload 2 (our own write's event), leaves anything else to run.
    const { gate, seen, queue } = firstCallHeld({ settleDirty: (key, payload) => (settled.push([key, payload]), payload === 2) });
    queue.add('k', 1);
    queue.add('k', 2);
    gate.resolve();
    await queue.idle();
    expect(seen).toEqual([1]);
    expect(settled).toEqual([['k', 2]]);
    expect(queue.holds('k')).toBe(false);
    queue.add('k', 3);
    await queue.idle();
    expect(seen).toEqual([1, 3]);
  });

  it('runs a key again for an add during its call that the caller does not settle', async () => {
    const { gate, seen, queue } = firstCallHeld({ settleDirty: () => false });
    queue.add('k', 1);
    queue.add('k', 5);
    gate.resolve();
    await queue.idle();
    expect(seen).toEqual([1, 5]);
  });

  it('reports a settleDirty that throws and runs the key again, as without it', async () => {
    const errors: string[] = [];
    const { gate, seen, queue } = firstCallHeld({
      concurrency: 1,
      settleDirty: () => {
        throw new Error('broken');
      },
      onError: (key, error) => errors.push(`${key}: ${(error as Error).message}`),
    });
    queue.add('k', 1);
    queue.add('k', 2);
    queue.add('other', 3);
    gate.resolve();
    await queue.idle();
    expect(seen.sort()).toEqual([1, 2, 3]);
    expect(errors).toEqual(['k: broken']);
  });

  it('holds a key while it waits and while it is processed, not once it is done', async () => {
    const gate = deferred();
    const queue = new WorkQueue<string>({ concurrency: 1, process: async (item) => (item.key === 'blocker' ? gate.promise : undefined) });
    queue.add('blocker', 'x');
    queue.add('a', 'x');
    expect([queue.holds('blocker'), queue.holds('a'), queue.holds('b')]).toEqual([true, true, false]);
    gate.resolve();
    await queue.idle();
    expect([queue.holds('blocker'), queue.holds('a')]).toEqual([false, false]);
  });

  it('limits calls in flight to the concurrency', async () => {
    let running = 0;
    let maxRunning = 0;
    const queue = new WorkQueue<null>({
      concurrency: 3,
      process: async () => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((r) => setTimeout(r, 5));
        running -= 1;
      },
    });
    for (let i = 0; i < 20; i++) queue.add(`k${i}`, null);
    await queue.idle();
    expect(maxRunning).toBe(3);
  });

  it('serves real changes before resync entries queued earlier', async () => {
    const order: string[] = [];
    const gate = deferred();
    const queue = new WorkQueue<null>({
      concurrency: 1,
      process: async (item) => {
        order.push(item.key);
        if (item.key === 'busy') await gate.promise;
      },
    });
    queue.add('busy', null);
    queue.add('resync-1', null, 'low');
    queue.add('resync-2', null, 'low');
    queue.add('change', null, 'high');
    queue.add('resync-2', null, 'high'); // a real change to a key already waiting as resync upgrades it
    gate.resolve();
    await queue.idle();
    expect(order).toEqual(['busy', 'change', 'resync-2', 'resync-1']);
  });

  it('backs off per key exponentially and resets after forget', () => {
    const queue = new WorkQueue<null>({ concurrency: 1, process: async () => {}, backoff: { baseMs: 10, maxMs: 35 } });
    expect([queue.addRateLimited('a', null), queue.addRateLimited('a', null), queue.addRateLimited('a', null)]).toEqual([10, 20, 35]);
    expect(queue.addRateLimited('b', null)).toBe(10);
    queue.forget('a');
    expect(queue.addRateLimited('a', null)).toBe(10);
    void queue.shutdown();
  });

  it('keeps the earliest of two delayed adds and runs it once', async () => {
    const seen: string[] = [];
    const queue = new WorkQueue<string>({ concurrency: 1, process: async (item) => void seen.push(item.payload) });
    queue.addAfter('a', 'late', 200);
    queue.addAfter('a', 'early', 10);
    queue.addAfter('a', 'later', 300);
    expect(queue.delayed).toBe(1);
    await new Promise((r) => setTimeout(r, 40));
    await queue.idle();
    expect(seen).toEqual(['early']);
    expect(queue.delayed).toBe(0);
  });

  it('forgets a removed key entirely', async () => {
    const seen: string[] = [];
    const gate = deferred();
    const queue = new WorkQueue<null>({
      concurrency: 1,
      process: async (item) => {
        seen.push(item.key);
        if (item.key === 'busy') await gate.promise;
      },
    });
    queue.add('busy', null);
    queue.add('gone', null);
    queue.addAfter('gone', null, 5);
    queue.remove('gone');
    gate.resolve();
    await new Promise((r) => setTimeout(r, 20));
    await queue.idle();
    expect(seen).toEqual(['busy']);
  });

  it('reports a throwing process and keeps serving other keys', async () => {
    const errors: string[] = [];
    const seen: string[] = [];
    const queue = new WorkQueue<null>({
      concurrency: 1,
      process: async (item) => {
        if (item.key === 'bad') throw new Error('boom');
        seen.push(item.key);
      },
      onError: (key, error) => errors.push(`${key}: ${(error as Error).message}`),
    });
    queue.add('bad', null);
    queue.add('good', null);
    await queue.idle();
    expect(errors).toEqual(['bad: boom']);
    expect(seen).toEqual(['good']);
  });
  it('waits out a delay longer than setTimeout can hold (an At due in years) instead of firing at once', async () => {
    vi.useFakeTimers();
    try {
      const calls: string[] = [];
      const queue = new WorkQueue<null>({ concurrency: 1, now: () => Date.now(), process: async (item) => void calls.push(item.key) });
      const fourYearsMs = 4 * 365 * 24 * 3600 * 1000;
      queue.addAfter('at-new-year', null, fourYearsMs);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(calls).toEqual([]);
      await vi.advanceTimersByTimeAsync(fourYearsMs - 60_001);
      expect(calls).toEqual([]);
      await vi.advanceTimersByTimeAsync(2);
      expect(calls).toEqual(['at-new-year']);
    } finally {
      vi.useRealTimers();
    }
  });

  describe('under the router-wide fair scheduler', () => {
    it('keeps one call per key and the per-Loop concurrency while queues share the cap', async () => {
      const scheduler = new FairScheduler({ capacity: 3, weightOf: () => 1, reserveFraction: 0 });
      const running = new Map<string, number>();
      let total = 0;
      let maxTotal = 0;
      let maxPerKey = 0;
      const perQueue = new Map<string, { now: number; max: number }>();
      const queue = (tenant: string, id: string, concurrency: number) => {
        const stats = { now: 0, max: 0 };
        perQueue.set(id, stats);
        return new WorkQueue<number>({
          concurrency,
          fairShare: { scheduler, tenant, id },
          process: async (item) => {
            const key = `${id}:${item.key}`;
            running.set(key, (running.get(key) ?? 0) + 1);
            total += 1;
            stats.now += 1;
            maxTotal = Math.max(maxTotal, total);
            maxPerKey = Math.max(maxPerKey, running.get(key)!);
            stats.max = Math.max(stats.max, stats.now);
            await new Promise((r) => setTimeout(r, 1));
            // Re-adding the running key must wait for this call to end.
            if (item.payload < 3) queues[id === 'a/1' ? 0 : 1]!.add(item.key, item.payload + 1);
            stats.now -= 1;
            total -= 1;
            running.set(key, running.get(key)! - 1);
          },
        });
      };
      const queues = [queue('a', 'a/1', 2), queue('b', 'b/1', 5)];
      for (const q of queues) for (const key of ['x', 'y', 'z', 'w']) q.add(key, 0);
      await Promise.all(queues.map((q) => q.idle()));
      await new Promise((r) => setTimeout(r, 5));
      await Promise.all(queues.map((q) => q.idle()));
      expect(maxTotal).toBe(3);
      expect(maxPerKey).toBe(1);
      expect(perQueue.get('a/1')!.max).toBeLessThanOrEqual(2);
      expect(scheduler.inFlight).toBe(0);
    });

    it("starts a quiet queue's key before a busy neighbour's backlog of hundreds", async () => {
      const scheduler = new FairScheduler({ capacity: 2, weightOf: () => 1, reserveFraction: 0 });
      const order: string[] = [];
      const release = deferred();
      const noisy = new WorkQueue<number>({ concurrency: 8, fairShare: { scheduler, tenant: 'noisy', id: 'noisy/l' }, process: async (item) => {
        order.push(`noisy:${item.key}`);
        if (item.key === '0' || item.key === '1') await release.promise;
      } });
      const quiet = new WorkQueue<number>({ concurrency: 8, fairShare: { scheduler, tenant: 'quiet', id: 'quiet/l' }, process: async (item) => {
        order.push(`quiet:${item.key}`);
      } });
      for (let i = 0; i < 300; i += 1) noisy.add(String(i), i);
      quiet.add('q', 0);
      expect(order).toEqual(['noisy:0', 'noisy:1']);
      release.resolve();
      await noisy.idle();
      await quiet.idle();
      expect(order.indexOf('quiet:q')).toBeLessThan(4);
      expect(order).toHaveLength(301);
    });

    it('frees its slots when it shuts down with work waiting', async () => {
      const scheduler = new FairScheduler({ capacity: 1, weightOf: () => 1, reserveFraction: 0 });
      const gate = deferred();
      const first = new WorkQueue<number>({ concurrency: 1, fairShare: { scheduler, tenant: 'a', id: 'a/1' }, process: () => gate.promise });
      const calls: string[] = [];
      const second = new WorkQueue<number>({ concurrency: 1, fairShare: { scheduler, tenant: 'b', id: 'b/1' }, process: async (item) => { calls.push(item.key); } });
      first.add('k', 0);
      first.add('l', 0);
      second.add('m', 0);
      const stopped = first.shutdown();
      gate.resolve();
      await stopped;
      await second.idle();
      expect(calls).toEqual(['m']);
      expect(scheduler.inFlight).toBe(0);
    });
  });
});
