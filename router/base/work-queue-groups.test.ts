// The work queue's workers carrying a backlog's keys (groupMax): which keys share a worker, what a worker counts as,
// and the per-key guarantees kept inside a group.
import { describe, expect, it, vi } from 'vitest';
import { WorkQueue, type WorkQueueOptions } from './work-queue.ts';
import { FairScheduler } from './fair-scheduler.ts';
import type { WorkerShare } from './worker-turns.ts';

describe('workers carrying groups of keys (groupMax)', () => {
  /** A queue whose calls wait until released, recording which keys shared a worker (the same share). */
  function heldGroups(options: Partial<WorkQueueOptions<number>>) {
    const gates = new Map<string, () => void>();
    const shares = new Map<string, WorkerShare>();
    const queue = new WorkQueue<number>({
      concurrency: 1,
      groupMax: 3,
      process: async (item, share) => {
        shares.set(item.key, share);
        await new Promise<void>((resolve) => gates.set(item.key, resolve));
      },
      ...options,
    });
    const release = (key: string) => gates.get(key)?.();
    const together = (a: string, b: string) => shares.get(a) !== undefined && shares.get(a) === shares.get(b);
    return { queue, release, shares, together };
  }

  it('gives a worker the keys no free worker could start, at most groupMax, counting each key in flight', async () => {
    const { queue, release, shares, together } = heldGroups({});
    queue.add('a', 0);
    // The only worker carries a alone: nothing else waited when it started.
    expect([shares.get('a')?.keys, queue.inFlight]).toEqual([1, 1]);
    for (const key of ['b', 'c', 'd', 'e']) queue.add(key, 0);
    release('a');
    await vi.waitFor(() => expect(queue.inFlight).toBe(3));
    expect(queue.busyWorkers).toBe(1);
    expect(together('b', 'c') && together('c', 'd')).toBe(true);
    expect(shares.get('b')?.keys).toBe(3);
    expect([queue.depth, shares.has('e')]).toEqual([1, false]);
    // The worker is free once every key it carries is done, not before.
    release('b');
    release('c');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(shares.has('e')).toBe(false);
    release('d');
    await vi.waitFor(() => expect(shares.get('e')?.keys).toBe(1));
    release('e');
    await queue.idle();
  });

  it('starts keys alone while workers are free', async () => {
    const { queue, release, shares } = heldGroups({ concurrency: 4 });
    for (const key of ['a', 'b', 'c']) queue.add(key, 0);
    expect(['a', 'b', 'c'].map((key) => shares.get(key)?.keys)).toEqual([1, 1, 1]);
    for (const key of ['a', 'b', 'c']) release(key);
    await queue.idle();
  });

  it('never runs a key twice at once: an add while its group runs waits for its call, then it runs again', async () => {
    const calls: string[] = [];
    const gates = new Map<string, () => void>();
    const queue = new WorkQueue<number>({
      concurrency: 1,
      groupMax: 3,
      process: async (item) => {
        calls.push(`${item.key}${item.payload}`);
        await new Promise<void>((resolve) => gates.set(`${item.key}${item.payload}`, resolve));
      },
    });
    queue.add('a', 0);
    queue.add('b', 0);
    queue.add('c', 0);
    gates.get('a0')?.();
    await vi.waitFor(() => expect(calls).toEqual(['a0', 'b0', 'c0']));
    queue.add('b', 1);
    expect(queue.depth).toBe(0);
    // b's call ends while c still holds the worker: b waits for a worker again, with what changed.
    gates.get('b0')?.();
    await vi.waitFor(() => expect(queue.depth).toBe(1));
    gates.get('c0')?.();
    await vi.waitFor(() => expect(calls).toEqual(['a0', 'b0', 'c0', 'b1']));
    gates.get('b1')?.();
    await queue.idle();
  });

  it('keeps to one slot of the fair scheduler per worker, whatever it carries', async () => {
    const scheduler = new FairScheduler({ capacity: 1, weightOf: () => 1, reserveFraction: 0 });
    const { queue, release, shares, together } = heldGroups({ concurrency: 2, fairShare: { scheduler, tenant: 'a', id: 'a/1' } });
    for (const key of ['a', 'b', 'c', 'd']) queue.add(key, 0);
    expect([scheduler.inFlight, queue.inFlight]).toEqual([1, 1]);
    release('a');
    // The next slot's worker takes b and c: one of the queue's two workers is still free for d.
    await vi.waitFor(() => expect(queue.inFlight).toBe(2));
    expect([together('b', 'c'), shares.has('d'), scheduler.inFlight]).toEqual([true, false, 1]);
    release('b');
    release('c');
    await vi.waitFor(() => expect(shares.get('d')?.keys).toBe(1));
    expect(scheduler.inFlight).toBe(1);
    release('d');
    await queue.idle();
    expect(scheduler.inFlight).toBe(0);
  });
});
