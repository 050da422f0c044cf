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

  it('alternates two sides, and starts the cycle again after as many rounds as sides', () => {
    expect([0, 1, 2, 3].map((round) => roundOrder(['kubeloop', 'go'], round))).toEqual([
      ['kubeloop', 'go'],
      ['go', 'kubeloop'],
      ['kubeloop', 'go'],
      ['go', 'kubeloop'],
    ]);
    expect(roundOrder(['a', 'b', 'c', 'd'], 5)).toEqual(roundOrder(['a', 'b', 'c', 'd'], 1));
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
