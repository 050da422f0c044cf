// What a function image loads: the production bundle of `kubeloop function`, followed through its static imports
// (what runs at start; lazily imported chunks load only when used), holds no HTTP framework, as the function is
// served on node:http (lib/runtime/node-function-server.ts; docs/performance.md "Function memory").
import { build, type Metafile } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { productionBundleOptions, productionPlugins } from './bundle-options.js';

const FRAMEWORK = ['fastify', '@fastify/', 'ajv', 'fast-json-stringify', 'find-my-way', 'avvio', 'light-my-request'];

/** The packages of every input in the outputs the entry loads statically. */
function loadedPackages(metafile: Metafile, entry: string): string[] {
  const seen = new Set<string>();
  const visit = (output: string) => {
    if (seen.has(output)) return;
    seen.add(output);
    for (const imported of metafile.outputs[output]?.imports ?? []) if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
  };
  visit(entry);
  const packages = new Set<string>();
  for (const output of seen) {
    for (const input of Object.keys(metafile.outputs[output]?.inputs ?? {})) {
      const inPackage = input.split('node_modules/').at(-1)!;
      if (input.includes('node_modules/')) packages.add(inPackage.startsWith('@') ? inPackage.split('/').slice(0, 2).join('/') : inPackage.split('/')[0]!);
    }
  }
  return [...packages].sort();
}

describe('the function command bundle', () => {
  it('loads no HTTP framework at start, but prom-client and pino', async () => {
    const outdir = fileURLToPath(new URL('../dist/test-function-bundle', import.meta.url));
    const result = await build({
      ...productionBundleOptions(outdir),
      entryPoints: [{ in: fileURLToPath(new URL('commands/function.ts', import.meta.url)), out: 'function' }],
      plugins: productionPlugins,
      write: false,
      metafile: true,
    });
    const entry = Object.keys(result.metafile.outputs).find((path) => path.endsWith('/function.mjs'))!;
    const packages = loadedPackages(result.metafile, entry);
    expect(packages).toEqual(expect.arrayContaining(['pino', 'prom-client']));
    for (const name of FRAMEWORK) expect(packages.filter((p) => p.startsWith(name)), name).toEqual([]);
  });
});
