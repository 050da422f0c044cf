// The whole tree's relative imports form no circle, type-only imports included: a circle hides which stage
// stands on which (docs/architecture.md, "Router stages", "Webhook stages"), and lint's per-stage rules only
// see one file's imports at a time. A small reading of the import specifiers, so no dependency is needed.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Every folder of TypeScript we ship or run: the deployables, what they share, the CLI and the API types. */
const TREE = ['router', 'webhooks', 'lib', 'functions', 'certs', 'cli', 'api'];
/** `from './x.ts'`, `import './x.ts'`, `import('./x.ts')`, over several lines too. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)'(\.{1,2}\/[^']+\.ts)'/g;

function sources(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.split('/').includes('node_modules'))
    .map((f) => join(ROOT, folder, f));
}

/** Each file's relative imports of other files in the graph. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  return new Map(files.map((file) => {
    const imports = [...readFileSync(file, 'utf8').matchAll(SPECIFIER)].map((m) => resolve(dirname(file), m[1]!));
    return [file, imports.filter((i) => known.has(i))];
  }));
}

/** Every circle found by a depth-first walk, as the files along it. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (file: string): void => {
    if (onPath.has(file)) {
      found.push([...path.slice(path.indexOf(file)), file]);
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    onPath.add(file);
    for (const next of graph.get(file) ?? []) visit(next);
    path.pop();
    onPath.delete(file);
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  return found;
}

describe('import graph', () => {
  it('finds a circle, type-only imports included', () => {
    expect(circles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual([['a', 'b', 'c', 'a']]);
    expect(circles(new Map([['a', ['b']], ['b', []], ['c', ['a', 'b']]]))).toEqual([]);
  });

  it('reads type-only, re-exported and multi-line imports', () => {
    const text = "import type { A } from './a.ts';\nexport { B } from '../b.ts';\nimport {\n  C,\n} from './c.ts';\nconst d = await import('./d.ts');";
    expect([...text.matchAll(SPECIFIER)].map((m) => m[1])).toEqual(['./a.ts', '../b.ts', './c.ts', './d.ts']);
  });

  it('has no circle anywhere in the tree', () => {
    const found = circles(importGraph(TREE.flatMap(sources)));
    expect(found.map((c) => c.map((f) => relative(ROOT, f)).join(' -> '))).toEqual([]);
  });
});
