// The order of a bench's rounds: every variant takes every position equally often.
import { describe, expect, it } from 'vitest';
import { alternatingRounds, roundOrder } from './alternating-rounds.ts';

describe('roundOrder', () => {
  it('puts each of three sides first, second and last once in three rounds', () => {
    const rounds = [0, 1, 2].map((round) => roundOrder(['kubeloop', 'baseline', 'go'], round));
    expect(rounds).toEqual([
      ['kubeloop', 'baseline', 'go'],
      ['baseline', 'go', 'kubeloop'],
      ['go', 'kubeloop', 'baseline'],
    ]);
    for (const side of ['kubeloop', 'baseline', 'go']) expect(rounds.map((order) => order.indexOf(side)).sort()).toEqual([0, 1, 2]);
  });

  it('lets each side follow each other equally often over twice as many rounds as sides', () => {
    const rounds = [0, 1, 2, 3, 4, 5].map((round) => roundOrder(['k', 'b', 'g'], round));
    const follows = rounds.flatMap((order) => order.slice(1).map((side, i) => `${order[i]}>${side}`)).sort();
    expect(follows).toEqual(['b>g', 'b>g', 'b>k', 'b>k', 'g>b', 'g>b', 'g>k', 'g>k', 'k>b', 'k>b', 'k>g', 'k>g']);
    for (const side of ['k', 'b', 'g']) expect(rounds.map((order) => order.indexOf(side)).sort()).toEqual([0, 0, 1, 1, 2, 2]);
    expect(roundOrder(['k', 'b', 'g'], 6)).toEqual(rounds[0]);
  });

  it('alternates two sides, each first in half the rounds', () => {
    expect([0, 1, 2, 3].map((round) => roundOrder(['kubeloop', 'go'], round)[0])).toEqual(['kubeloop', 'go', 'go', 'kubeloop']);
  });

  it('keeps one side, or none, as it is', () => {
    expect(roundOrder(['go'], 3)).toEqual(['go']);
    expect(roundOrder([], 2)).toEqual([]);
  });
});

describe('alternatingRounds', () => {
  it('runs each variant once unmeasured, then in the rotated order of each round', async () => {
    const ran: string[] = [];
    const figures = await alternatingRounds({ a: 'a', b: 'b', c: 'c' }, 3, async (variant) => {
      ran.push(variant);
      return ran.length;
    });
    expect(ran).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'b', 'c', 'a', 'c', 'a', 'b']);
    expect(figures).toEqual({ a: [4, 9, 11], b: [5, 7, 12], c: [6, 8, 10] });
  });
});
