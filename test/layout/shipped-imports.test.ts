// No shipped file imports test code: not vitest, not test/ (test/support/ included), and no test support is
// left in a shipped folder as a `*-for-tests.ts` file. Unit tests (*.test.ts) beside the code may import both.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** What the package, the images and the SDKs ship. */
const SHIPPED = ['router', 'webhooks', 'lib', 'functions', 'certs', 'cli', 'api', 'sdk'];
/** Every module specifier: `from '…'`, `import '…'`, `import('…')`, over several lines too. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)'([^']+)'/g;
const TEST_ROOT = join(ROOT, 'test') + sep;

function shippedSources(): string[] {
  return SHIPPED.flatMap((folder) => readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|js|mjs)$/.test(f) && !f.endsWith('.test.ts') && !f.split(sep).includes('node_modules'))
    .map((f) => join(ROOT, folder, f)));
}

/** Why one file's import of `specifier` is test code in a shipped file, or undefined. */
export function testImport(file: string, specifier: string): string | undefined {
  if (specifier === 'vitest' || specifier.startsWith('vitest/') || specifier.startsWith('@vitest/')) return `imports ${specifier}`;
  if (specifier.startsWith('.') && resolve(dirname(file), specifier).startsWith(TEST_ROOT)) return `imports ${specifier} (test/)`;
  return undefined;
}

describe('shipped imports', () => {
  it('tells vitest and test/ imports from the rest', () => {
    const file = join(ROOT, 'lib', 'kube', 'x.ts');
    expect(testImport(file, 'vitest')).toBe('imports vitest');
    expect(testImport(file, '../../test/support/memory-informers.ts')).toBe('imports ../../test/support/memory-informers.ts (test/)');
    expect(testImport(file, '../observability/logger.ts')).toBeUndefined();
    expect(testImport(file, '../../lib/testing/requests.ts')).toBeUndefined();
  });

  it('finds no test import and no *-for-tests file in router, webhooks, lib, functions, certs, cli, api or sdk', () => {
    const found = shippedSources().flatMap((file) => {
      const name = relative(ROOT, file);
      const imports = [...readFileSync(file, 'utf8').matchAll(SPECIFIER)]
        .map((m) => testImport(file, m[1]!))
        .filter((why): why is string => why !== undefined)
        .map((why) => `${name} ${why}`);
      return /-for-tests\.[a-z]+$/.test(name) ? [`${name} is test support (test/support/)`, ...imports] : imports;
    });
    expect(found).toEqual([]);
  });
});
