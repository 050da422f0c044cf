// docs/architecture.md matches the tree: its folder tables name every folder there is, its stage tables name
// every module of their folder and nothing else, and every file or module it names in backticks exists.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
/** A module named the way this tree names files: lowercase kebab-case (`hook-spec`, `dispatch`). */
const MODULE_NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

export interface TableRow {
  folder: string;
  cells: string[];
}

/** The rows of the markdown tables whose first cell is a backticked folder (`router/loops/`). */
export function folderRows(markdown: string): TableRow[] {
  return markdown.split('\n').flatMap((line) => {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    const folder = /^`([a-z][a-z0-9-]*(?:\/[a-z0-9-]+)*\/)`/.exec(cells[0] ?? '')?.[1];
    return folder ? [{ folder, cells }] : [];
  });
}

/** Backticked kebab-case names in a cell: the modules it names (`hook-spec`, not `decideAdmission` or `--qps`). */
export function moduleNames(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((name) => MODULE_NAME.test(name));
}

/** The folder's modules: its .ts files that are neither tests nor declarations, without the extension. */
function modulesOf(folder: string): string[] {
  return readdirSync(join(ROOT, folder)).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts')).map((f) => f.slice(0, -3)).sort();
}

function subfolders(folder: string): string[] {
  return readdirSync(join(ROOT, folder)).filter((f) => !f.startsWith('.') && f !== 'node_modules' && statSync(join(ROOT, folder, f)).isDirectory()).map((f) => `${folder}${f}/`).sort();
}

function filesNamed(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else names.add(entry.name);
    }
  };
  for (const top of ['api', 'lib', 'router', 'webhooks', 'functions', 'certs', 'cli', 'test', 'bench', 'charts', 'sdk']) walk(top);
  for (const entry of readdirSync(ROOT, { withFileTypes: true })) if (entry.isFile()) names.add(entry.name);
  return names;
}

const rows = folderRows(DOC);
const stageRows = rows.filter((r) => /^(router|webhooks)\/[a-z-]+\/$/.test(r.folder));

describe('docs/architecture.md', () => {
  it('reads folder rows and module names from markdown', () => {
    expect(folderRows('| `router/apply/` | the write path | `apply-actions`, `json-patch` (x) | base |\n| Folder | Holds |')).toEqual([
      { folder: 'router/apply/', cells: ['`router/apply/`', 'the write path', '`apply-actions`, `json-patch` (x)', 'base'] },
    ]);
    expect(moduleNames('`hook-spec` (`resolveHook`), `admissions.kubeloop.dev`, `--qps`, `dispatch`')).toEqual(['hook-spec', 'dispatch']);
  });

  it('names every folder of the tree it describes, and no folder that is gone', () => {
    const named = new Set(rows.map((r) => r.folder));
    for (const row of rows) expect(existsSync(join(ROOT, row.folder)), `${row.folder} is in the doc but not in the tree`).toBe(true);
    const tops = ['api/', 'lib/', 'router/', 'functions/', 'webhooks/', 'certs/', 'cli/', 'charts/', 'test/', 'bench/', 'samples/', 'docs/', 'sdk/', 'schemas/'];
    expect(tops.filter((t) => !named.has(t) && !DOC.includes(`\`${t}\``))).toEqual([]);
    const described = ['router/', 'webhooks/', 'lib/', 'cli/', 'functions/'].flatMap(subfolders).filter((f) => !named.has(f));
    expect(described, 'folders with no row in docs/architecture.md').toEqual([]);
  });

  it('lists in each router and webhook stage exactly the modules of its folder', () => {
    expect(stageRows.length).toBeGreaterThanOrEqual(11);
    const drift = stageRows.flatMap((row) => {
      const listed = new Set(moduleNames(row.cells[2] ?? ''));
      const actual = modulesOf(row.folder);
      return [
        ...actual.filter((m) => !listed.has(m)).map((m) => `${row.folder}${m}.ts is not in its row`),
        ...[...listed].filter((m) => !actual.includes(m)).map((m) => `${row.folder}: the row names ${m}, which is not there`),
      ];
    });
    expect(drift).toEqual([]);
  });

  it('names only modules that exist in the lib/ and cli/ rows', () => {
    const missing = rows.filter((r) => /^(lib|cli)\/[a-z-]+\/$/.test(r.folder)).flatMap((row) =>
      moduleNames(row.cells.slice(1).join(' ')).filter((m) => !existsSync(join(ROOT, row.folder, `${m}.ts`)) && !existsSync(join(ROOT, row.folder, m))).map((m) => `${row.folder}${m}`));
    expect(missing).toEqual([]);
  });

  it('names only files that exist', () => {
    const files = filesNamed();
    const named = [...DOC.matchAll(/`([A-Za-z0-9_./-]+\.(?:ts|js|yaml|go|py))`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((n) => !files.has(basename(n)))).toEqual([]);
  });
});
