import { describe, expect, it } from 'vitest';
import { budgetProblem, bytesProblem, DEFAULT_REQUEST_CAPS, entryCountProblem } from './request-caps.ts';

const caps = { objectsPerEntry: 3, objectsPerRequest: 5, relatedBytesPerRequest: 100 };

describe('request caps', () => {
  it('refuses an entry over its own cap, and a request whose entries together are over the request cap', () => {
    expect(entryCountProblem('a', 3, { objects: 0, bytes: 0 }, caps)).toBeUndefined();
    expect(entryCountProblem('a', 4, { objects: 0, bytes: 0 }, caps)).toContain('related entry "a" selects 4 objects; at most 3 per entry');
    expect(entryCountProblem('b', 2, { objects: 3, bytes: 0 }, caps)).toBeUndefined();
    expect(entryCountProblem('b', 3, { objects: 3, bytes: 0 }, caps)).toContain('would number 6; at most 5 per request');
  });

  it('refuses the byte that crosses the request cap, not the one that reaches it', () => {
    expect(bytesProblem('a', 40, { objects: 1, bytes: 60 }, caps)).toBeUndefined();
    expect(bytesProblem('a', 41, { objects: 1, bytes: 60 }, caps)).toContain('(101 with entry "a"); at most 100 per request (--max-related-bytes-per-request)');
  });

  it('refuses a request that could never fit the budget in flight', () => {
    expect(budgetProblem(10, 10)).toBeUndefined();
    expect(budgetProblem(11, 10)).toContain('--max-request-bytes-in-flight');
  });

  it('lets the reported attack (4 entries of 8 ConfigMaps of 900 kB) through by count but not by bytes', () => {
    const tally = { objects: 0, bytes: 0 };
    for (const entry of ['a', 'b', 'c', 'd']) {
      expect(entryCountProblem(entry, 8, tally, DEFAULT_REQUEST_CAPS)).toBeUndefined();
      tally.objects += 8;
    }
    expect(bytesProblem('a', 10 * 900_000, { objects: 10, bytes: 0 }, DEFAULT_REQUEST_CAPS)).toBeDefined();
    expect(bytesProblem('a', 9 * 900_000, { objects: 9, bytes: 0 }, DEFAULT_REQUEST_CAPS)).toBeUndefined();
  });
});
