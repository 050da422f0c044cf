// A retry pending from a failure when the key succeeds another way (WorkQueue.forget): cancelled, and a
// requeue-after it displaced or shadowed armed again.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WorkQueue } from './work-queue.ts';

describe('a retry pending when the key succeeds (forget)', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());
  const queueOf = (seen: string[]) => new WorkQueue<string>({ concurrency: 1, process: async (item) => void seen.push(item.payload), backoff: { baseMs: 10, maxMs: 10 } });

  it('is cancelled: after a conflict healed by another event, the retry would call with a cache still behind', async () => {
    const seen: string[] = [];
    const queue = queueOf(seen);
    queue.addRateLimited('a', 'retry');
    queue.forget('a');
    await vi.advanceTimersByTimeAsync(100);
    expect(seen).toEqual([]);
    expect(queue.delayed).toBe(0);
  });

  it('still runs when nothing succeeded meanwhile', async () => {
    const seen: string[] = [];
    const queue = queueOf(seen);
    queue.addRateLimited('a', 'retry');
    await vi.advanceTimersByTimeAsync(100);
    expect(seen).toEqual(['retry']);
  });

  it('gives back the requeue-after it stood in for, whichever came first, and a plain delayed add is never cancelled', async () => {
    const seen: string[] = [];
    const queue = queueOf(seen);
    queue.addAfter('a', 'requeue-a', 500);
    queue.addRateLimited('a', 'retry-a');
    queue.addRateLimited('b', 'retry-b');
    queue.addAfter('b', 'requeue-b', 400);
    queue.addAfter('c', 'requeue-c', 300);
    for (const key of ['a', 'b', 'c']) queue.forget(key);
    await vi.advanceTimersByTimeAsync(100);
    expect(seen).toEqual([]);
    await vi.advanceTimersByTimeAsync(500);
    expect(seen).toEqual(['requeue-c', 'requeue-b', 'requeue-a']);
  });
});
