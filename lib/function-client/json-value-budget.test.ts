// The streaming value counter agrees with JSON.parse on every valid text, wherever the chunks are cut,
// and refuses a text of a million empty objects without parsing it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkJsonBudget, JsonValueBudget } from './json-value-budget.ts';

/** Values and depth of a parsed value, the slow way. */
function walk(value: unknown, depth = 1): { values: number; depth: number } {
  if (typeof value !== 'object' || value === null) return { values: 1, depth: 0 };
  let values = 1;
  let deepest = depth;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    const inner = walk(child, depth + 1);
    values += inner.values;
    deepest = Math.max(deepest, inner.depth);
  }
  return { values, depth: deepest };
}

function countInChunks(text: string, cuts: number[]): number {
  const bytes = new TextEncoder().encode(text);
  const budget = new JsonValueBudget(Number.MAX_SAFE_INTEGER);
  let start = 0;
  for (const cut of [...cuts.map((c) => c % (bytes.length + 1))].sort((a, b) => a - b)) {
    budget.feed(bytes.subarray(start, Math.max(start, cut)));
    start = Math.max(start, cut);
  }
  budget.feed(bytes.subarray(start));
  return budget.values;
}

describe('JsonValueBudget', () => {
  it('counts exactly the values JSON.parse builds, for any valid JSON split anywhere', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(0, 2, '\t'), fc.array(fc.nat(), { maxLength: 6 }), (value, indent, cuts) => {
        const text = JSON.stringify(value, null, indent);
        expect(countInChunks(text, cuts)).toBe(walk(JSON.parse(text)).values);
      }),
      { numRuns: 500 },
    );
  });

  it('never counts more values or open containers than the text has characters (what the short-text answer relies on)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 0, 2), (value, indent) => {
        const text = JSON.stringify(value, null, indent);
        const { values, depth } = walk(JSON.parse(text));
        expect(values).toBeLessThanOrEqual(text.length);
        expect(depth).toBeLessThanOrEqual(text.length);
        // At exactly its own length as the budget, every text passes; one value less refuses a text that has that many.
        expect(checkJsonBudget(text, text.length, text.length).ok).toBe(true);
        if (values > 1) expect(checkJsonBudget(text, values - 1).ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('counts keys with escaped quotes and unicode as keys, not values', () => {
    const text = '{"a\\"b": "c\\\\", "é€𝄞": [1, -2.5e3, true, false, null, "x,y:{"], "k": {}}';
    expect(checkJsonBudget(text, 10).ok).toBe(true);
    expect(checkJsonBudget(text, 9)).toMatchObject({ ok: false, problem: 'values' });
    expect(walk(JSON.parse(text)).values).toBe(10);
  });

  it('refuses the first value over the budget and nesting over the depth', () => {
    expect(checkJsonBudget('[1,2,3]', 4).ok).toBe(true);
    expect(checkJsonBudget('[1,2,3,4]', 4)).toEqual({ ok: false, problem: 'values', message: 'holds more than 4 JSON values' });
    expect(checkJsonBudget('[[[]]]', 100, 3).ok).toBe(true);
    expect(checkJsonBudget('[[[[]]]]', 100, 3)).toMatchObject({ ok: false, problem: 'depth' });
  });

  it('refuses 15 MiB of empty objects (7.8 million values) at the budget', () => {
    const bomb = `[${'{},'.repeat(5 * 1024 * 1024)}{}]`;
    expect(checkJsonBudget(bomb)).toEqual({ ok: false, problem: 'values', message: 'holds more than 200000 JSON values' });
  });
});
