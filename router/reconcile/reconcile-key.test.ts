import { describe, expect, it } from 'vitest';
import type { Trigger } from '../../lib/contract/types.ts';
import { applyQueueStep } from './reconcile-key.ts';
import { WorkQueue } from '../base/work-queue.ts';

function idleQueue(): WorkQueue<Trigger> {
  return new WorkQueue<Trigger>({ concurrency: 1, process: async () => {}, backoff: { baseMs: 1000, maxMs: 60_000, jitter: 0 } });
}

describe('applyQueueStep', () => {
  it('backs off with a growing delay, counts the failures and reports the delay', async () => {
    const queue = idleQueue();
    expect(applyQueueStep(queue, 'a', { kind: 'backoff' })).toBe(1000);
    expect(applyQueueStep(queue, 'a', { kind: 'backoff' })).toBe(2000);
    expect(queue.failures('a')).toBe(2);
    expect(queue.delayed).toBe(1);
    await queue.shutdown();
  });

  it('forgets the failures on forget, and keeps them while waiting out a named delay', async () => {
    const queue = idleQueue();
    applyQueueStep(queue, 'a', { kind: 'backoff' });
    expect(applyQueueStep(queue, 'a', { kind: 'requeue-after', delayMs: 5000 })).toBeUndefined();
    expect(queue.failures('a')).toBe(1);
    applyQueueStep(queue, 'a', { kind: 'forget-and-requeue-after', delayMs: 5000 });
    expect(queue.failures('a')).toBe(0);
    expect(queue.delayed).toBe(1);
    await queue.shutdown();
  });

  it('leaves the queue alone on wait', async () => {
    const queue = idleQueue();
    applyQueueStep(queue, 'a', { kind: 'wait' });
    expect([queue.depth, queue.delayed, queue.failures('a')]).toEqual([0, 0, 0]);
    await queue.shutdown();
  });
});
