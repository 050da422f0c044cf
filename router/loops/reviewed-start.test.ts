// startReviewed: the review's outcome first, the runner started while it is asked, and no list for a Loop denied before.
import { describe, expect, it } from 'vitest';
import type { AccessVerdict } from '../../lib/kube/access-review.ts';
import { startReviewed, type ReviewedStart } from './reviewed-start.ts';

/** A start and a stop that record what happened; `fails` makes the start throw. */
function runner(fails?: Error) {
  const seen: string[] = [];
  let allowed: Promise<unknown> | undefined;
  const o: Omit<ReviewedStart, 'review' | 'overlap'> = {
    start: async (gate) => {
      seen.push('start');
      allowed = gate;
      if (fails) throw fails;
    },
    stop: async () => void seen.push('stop'),
  };
  return { o, seen, allowed: () => allowed };
}

const refused: AccessVerdict = { allowed: false, message: 'may not list pods' };

describe('startReviewed', () => {
  it('starts while the review is asked, and lets the runner queue once it allows', async () => {
    const r = runner();
    let answer!: (v: AccessVerdict) => void;
    const verdict = startReviewed({ ...r.o, overlap: true, review: () => new Promise((resolve) => (answer = resolve)) });
    await Promise.resolve();
    expect(r.seen).toEqual(['start']);
    answer({ allowed: true });
    expect(await verdict).toEqual({ allowed: true });
    await expect(r.allowed()).resolves.toBeUndefined();
  });

  it('stops the started runner when the review refuses, and its gate never opens', async () => {
    const r = runner();
    expect(await startReviewed({ ...r.o, overlap: true, review: async () => refused })).toBe(refused);
    expect(r.seen).toEqual(['start', 'stop']);
    await expect(r.allowed()).rejects.toThrow(/did not allow/);
  });

  it("tells the review's failure before the start's, and the refusal before a start that failed; each releases the launch", async () => {
    const broken = runner(new Error('unknown kind'));
    await expect(startReviewed({ ...broken.o, overlap: true, review: async () => Promise.reject(new Error('review failed')) })).rejects.toThrow('review failed');
    expect(broken.seen).toEqual(['start', 'stop']);
    const refusedBroken = runner(new Error('unknown kind'));
    expect(await startReviewed({ ...refusedBroken.o, overlap: true, review: async () => refused })).toBe(refused);
    expect(refusedBroken.seen).toEqual(['start', 'stop']);
    const allowedBroken = runner(new Error('unknown kind'));
    await expect(startReviewed({ ...allowedBroken.o, overlap: true, review: async () => ({ allowed: true }) })).rejects.toThrow('unknown kind');
    expect(allowedBroken.seen).toEqual(['start', 'stop']);
  });

  it('without overlap, starts nothing before the review allows, and releases the launch when it refuses', async () => {
    const r = runner();
    expect(await startReviewed({ ...r.o, overlap: false, review: async () => refused })).toBe(refused);
    // Never started, but released: a Loop refused on every retry must not keep a budget slot per retry.
    expect(r.seen).toEqual(['stop']);
    const allowed = runner();
    await startReviewed({ ...allowed.o, overlap: false, review: async () => ({ allowed: true }) });
    expect(allowed.seen).toEqual(['start']);
    expect(allowed.allowed()).toBeUndefined();
  });
});
