import { describe, expect, it } from 'vitest';
import { countValues, MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.ts';

const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth));

describe('nestsDeeperThan', () => {
  it('counts objects and arrays, not scalars', () => {
    expect(nestsDeeperThan(1, 0)).toBe(false);
    expect(nestsDeeperThan({ a: { b: [1] } }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: { b: [1] } }, 2)).toBe(true);
  });
  it('finds the one deep branch among shallow ones, at the limit exactly', () => {
    expect(nestsDeeperThan({ wide: Array.from({ length: 1000 }, () => ({})), deep: nested(MAX_JSON_DEPTH - 1) })).toBe(false);
    expect(nestsDeeperThan({ wide: [], deep: nested(MAX_JSON_DEPTH) })).toBe(true);
  });
  it('walks own properties only, as a parsed value has them', () => {
    const inherits = Object.create({ deep: nested(MAX_JSON_DEPTH + 1) }) as Record<string, unknown>;
    inherits.shallow = { a: [] };
    expect(nestsDeeperThan(inherits)).toBe(false);
  });
  it('walks a value nested a million deep without overflowing the stack', () => {
    expect(nestsDeeperThan(nested(1_000_000))).toBe(true);
  });
});

describe('countValues', () => {
  it('counts every object, array and scalar', () => {
    expect(countValues({ a: [1, 'x', null], b: {} }, 100)).toBe(6);
  });
  it('stops counting just past the budget', () => {
    const bomb = Array.from({ length: 1_000_000 }, () => ({}));
    expect(countValues(bomb, 1000)).toBe(1001);
  });
});
