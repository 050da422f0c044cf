// BENCH_HEAP_PROF's sampler counts what was allocated, garbage included, and names where: what its figures rest on.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHeapSampling } from './heap-sampling.ts';
import { summarizeHeap, type HeapProfile } from './heap-profile-summary.ts';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/**
 * Allocates `count` objects of ~100 bytes each (an object, its string and its array), held a thousand at a time so the
 * compiler cannot leave them out, and none kept at the end: only a profile of allocations still sees them.
 */
function allocateGarbage(count: number): number {
  let batch: Array<{ index: number; label: string; values: number[] }> = [];
  let kept = 0;
  for (let i = 0; i < count; i++) {
    batch.push({ index: i, label: `item-${i}`, values: [i, i + 1, i + 2] });
    if (batch.length === 1000) {
      kept += batch.length;
      batch = [];
    }
  }
  return kept + batch.length;
}

describe('startHeapSampling', () => {
  it('starts nothing without a directory', () => {
    expect(startHeapSampling('test', '')).toBeUndefined();
  });

  it('writes a profile that counts objects already collected, under the function that allocated them', async () => {
    dir = await mkdtemp(join(tmpdir(), 'heap-sampling-'));
    const sampling = startHeapSampling('test', dir)!;
    // The young generation's scavenges collect them during the loop: a profile of what is live would no longer hold them.
    allocateGarbage(100_000);
    const file = await sampling.stop();
    expect(file).toBe(join(dir, `test-${process.pid}.heapprofile`));
    const summary = summarizeHeap(JSON.parse(await readFile(file, 'utf8')) as HeapProfile);
    const allocated = [...summary.byFunction].filter(([name]) => name.startsWith('allocateGarbage ')).reduce((sum, [, bytes]) => sum + bytes, 0);
    // 100,000 objects with a string and an array each: ~10 MB, whatever V8's exact sizes; sampled, so not exact.
    expect(allocated).toBeGreaterThan(5 * 1024 * 1024);
  });
});
