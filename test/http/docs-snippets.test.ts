// Every ```ts snippet of README.md and docs/*.md, and the TypeScript `kubeloop init` writes, type-checks as a
// user's code against the package's entry points (`kubeloop`, `kubeloop/testing`, ...), resolved to this
// checkout's sources through the package's own exports map. A snippet that is deliberately a fragment says so
// on the line above its fence: `<!-- snippet: partial (why) -->`; `<!-- snippet: file=src/index.ts -->` names
// the file it is (others import it), else it is `<page>-<n>.ts` at the project's root.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { TSCONFIG } from '../../cli/init/templates/function-deploy.ts';
import { PROJECT_TEMPLATES } from '../../cli/init/templates/index.ts';
import { readProjectOptions, type RawInitOptions } from '../../cli/init/project-options.ts';
import { extractSnippets } from './markdown-snippets.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TOOLS = { typescript: '', tsx: '', typesNode: '', node: '', engines: {}, overrides: {} };

/** `paths` for tsc from package.json's exports: "kubeloop/testing" -> lib/testing/index.ts in this checkout. */
async function packagePaths(): Promise<Record<string, string[]>> {
  const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { name: string; exports: Record<string, { types?: string } | string> };
  const paths: Record<string, string[]> = {};
  for (const [entry, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string' || !target.types) continue;
    paths[join(pkg.name, entry)] = [join(REPO, target.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts'))];
  }
  return paths;
}

const pages = ['README.md', ...(await readdir(join(REPO, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const snippets = (await Promise.all(pages.map(async (page) => extractSnippets(page, await readFile(join(REPO, page), 'utf8'))))).flat();
let project = '';
afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

describe('the TypeScript of the docs and of kubeloop init', () => {
  it('finds the snippets, and imports the package as a user does, never its source paths', () => {
    const checked = snippets.filter((s) => !s.partial).map((s) => `${s.page}:${s.file ?? 'root'}`);
    expect(checked).toEqual(expect.arrayContaining(['docs/writing-a-function.md:src/index.ts', 'docs/writing-a-function.md:test/index.test.ts', 'docs/admission.md:root']));
    for (const snippet of snippets.filter((s) => !s.partial)) expect(snippet.code, `${snippet.page}:${snippet.line}`).not.toMatch(/from 'kubeloop\/(lib|functions|api|cli)\//);
  });

  it('type-checks every snippet not marked partial, and the projects kubeloop init writes', { timeout: 180_000 }, async () => {
    project = await mkdtemp(join(tmpdir(), 'kubeloop-snippets-'));
    const write = async (file: string, content: string): Promise<void> => {
      await mkdir(dirname(join(project, file)), { recursive: true });
      await writeFile(join(project, file), content);
    };
    const where = new Map<string, string>();
    for (const snippet of snippets.filter((s) => !s.partial)) {
      const file = snippet.file ?? `${snippet.page.replace(/\W+/g, '-')}-${snippet.line}.ts`;
      if (where.has(file)) throw new Error(`${snippet.page}:${snippet.line} and ${where.get(file)} are both ${file}`);
      where.set(file, `${snippet.page}:${snippet.line}`);
      await write(file, snippet.code);
    }
    // The scaffolds, each in a folder of its own, checked with the tsconfig they ship.
    const scaffolds: Array<[string, Omit<RawInitOptions, 'dir'>]> = [['reconcile', { for: 'apps/v1/Deployment', owns: ['v1/Service'] }], ['validating', { admission: 'validating' }], ['mutating', { admission: 'mutating' }], ['own-kind', { crd: 'example.com/v1alpha1/Widget' }]];
    for (const [name, extra] of scaffolds) {
      const options = readProjectOptions({ dir: name, ...extra }, '0.0.0');
      const template = PROJECT_TEMPLATES[options.admission ? 'admission' : 'function'];
      for (const file of template?.(options, TOOLS) ?? []) if (file.path.endsWith('.ts')) await write(join('scaffolds', name, file.path), file.content);
    }
    const tsconfig = JSON.parse(TSCONFIG) as { compilerOptions: Record<string, unknown> };
    await write('package.json', '{ "type": "module" }\n');
    await write('tsconfig.json', JSON.stringify({ compilerOptions: { ...tsconfig.compilerOptions, lib: ['ES2023', 'DOM'], baseUrl: '.', paths: await packagePaths() }, include: ['**/*.ts'] }, null, 2));
    await symlink(join(REPO, 'node_modules'), join(project, 'node_modules'), 'dir');
    const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', project, '--pretty', 'false'], { cwd: project, maxBuffer: 16 * 1024 * 1024 }).catch((error: unknown) => error as { stdout: string });
    // Errors name the temp file: say which page and line it came from.
    const errors = result.stdout.split('\n').filter((line) => line.includes('error TS')).map((line) => {
      const file = line.slice(0, line.indexOf('('));
      return where.has(file) ? `${where.get(file)}: ${line}` : line;
    });
    expect(errors).toEqual([]);
  });
});
