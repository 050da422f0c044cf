import { describe, expect, it } from 'vitest';
import { labelSelectorQuery, matchesLabelSelector, validateLabelSelector } from './label-selector.ts';

describe('matchesLabelSelector', () => {
  const selector = {
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'tier', operator: 'In', values: ['a', 'b'] },
      { key: 'legacy', operator: 'DoesNotExist' },
    ],
  };
  it('matches when every term holds', () => {
    expect(matchesLabelSelector(selector, { app: 'web', tier: 'a' })).toBe(true);
  });
  it('fails on any term', () => {
    expect(matchesLabelSelector(selector, { app: 'web', tier: 'c' })).toBe(false);
    expect(matchesLabelSelector(selector, { app: 'web', tier: 'a', legacy: '' })).toBe(false);
    expect(matchesLabelSelector(selector, { tier: 'a' })).toBe(false);
  });
  it('treats a missing selector as everything and NotIn as true for absent keys', () => {
    expect(matchesLabelSelector(undefined, undefined)).toBe(true);
    expect(matchesLabelSelector({ matchExpressions: [{ key: 'x', operator: 'NotIn', values: ['1'] }] }, {})).toBe(true);
  });
});

describe('labelSelectorQuery', () => {
  it('renders the query syntax the API server accepts', () => {
    expect(
      labelSelectorQuery({
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'tier', operator: 'NotIn', values: ['b', 'a'] },
          { key: 'ready', operator: 'Exists' },
          { key: 'old', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('app=web,tier notin (a,b),ready,!old');
    expect(labelSelectorQuery({})).toBeUndefined();
  });
});

describe('validateLabelSelector', () => {
  it('names the bad expression', () => {
    expect(() => validateLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Equals' }] }, 'spec.selector')).toThrow(
      'spec.selector.matchExpressions[0].operator "Equals"',
    );
    expect(() => validateLabelSelector({ matchExpressions: [{ key: 'a', operator: 'In' }] })).toThrow('needs values');
  });
});
