// No source file over 350 lines outside bench/ (docs/architecture.md: modules stay small, about 300 lines): a long
// file is usually two concerns waiting to be split, and a review misses what a long file hides.
// Reads git's list (tracked files, and new ones not ignored, so a long file fails before it is committed).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const LIMIT = 350;
const SOURCE = /\.(ts|js|mjs|py|go)$/;

/** Lines as `wc -l` counts them, plus a last line without its newline. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/** Whether the rule applies to `path` (relative to the repository, `/`-separated). */
export function isCheckedSource(path: string): boolean {
  const parts = path.split('/');
  return SOURCE.test(path) && parts[0] !== 'bench' && !parts.includes('node_modules');
}

/** "path: N lines (limit L)" for each file over the limit. */
export function oversized(files: ReadonlyArray<{ path: string; text: string }>, limit = LIMIT): string[] {
  return files.filter((f) => isCheckedSource(f.path) && lineCount(f.text) > limit).map((f) => `${f.path}: ${lineCount(f.text)} lines (limit ${limit})`);
}

function repositoryFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  // A tracked file deleted in the working tree is listed but gone: nothing to measure.
  return [...new Set(listed.split('\0').filter(Boolean))].filter((path) => isCheckedSource(path) && existsSync(join(ROOT, path)));
}

describe('file size', () => {
  it('counts lines as wc -l does, a last line without newline included', () => {
    expect([lineCount(''), lineCount('a'), lineCount('a\n'), lineCount('a\nb'), lineCount('a\nb\n')]).toEqual([0, 1, 1, 2, 2]);
  });

  it('checks .ts, .js, .mjs, .py and .go files outside bench/ and node_modules', () => {
    expect(['router/x.ts', 'cli/bin.js', 'a/b.mjs', 'sdk/python/k.py', 'sdk/go/core.go'].every(isCheckedSource)).toBe(true);
    expect(['bench/long.ts', 'sdk/node_modules/x/index.js', 'docs/a.md', 'charts/kubeloop/values.yaml', 'test/benchmarks.ts.snap'].some(isCheckedSource)).toBe(false);
    expect(isCheckedSource('test/bench/x.ts')).toBe(true);
  });

  it('names each file over the limit with its line count', () => {
    const files = [
      { path: 'lib/long.ts', text: 'x\n'.repeat(351) },
      { path: 'lib/at-limit.ts', text: 'x\n'.repeat(350) },
      { path: 'bench/long.ts', text: 'x\n'.repeat(900) },
    ];
    expect(oversized(files)).toEqual(['lib/long.ts: 351 lines (limit 350)']);
  });

  it(`finds no source file over ${LIMIT} lines outside bench/`, () => {
    const files = repositoryFiles().map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));
    expect(files.length).toBeGreaterThan(100);
    expect(oversized(files)).toEqual([]);
  });
});
