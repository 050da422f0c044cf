// What a function image loads: the production bundle of `kubeloop function`, followed through its static imports
// (what runs at start; lazily imported chunks load only when used), holds no HTTP framework, as the function is
// served on node:http (lib/runtime/node-function-server.ts; docs/performance.md "Function memory"). The same for
// what the router's startup snapshot evaluates while it is built, and so restores at every start.
import { build, type Metafile } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { productionBundleOptions, productionPlugins } from './bundle-options.js';
import { routerSnapshotEntry, snapshotBundleOptions } from './snapshot-bundle.js';

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
  return packagesOf([...seen].flatMap((output) => Object.keys(metafile.outputs[output]?.inputs ?? {})));
}

/** The packages (name and path within) of node_modules inputs. */
function packageFiles(inputs: string[]): string[] {
  return inputs.filter((input) => input.includes('node_modules/')).map((input) => input.split('node_modules/').at(-1)!);
}

function packagesOf(inputs: string[]): string[] {
  const names = packageFiles(inputs).map((file) => (file.startsWith('@') ? file.split('/').slice(0, 2).join('/') : file.split('/')[0]!));
  return [...new Set(names)].sort();
}

/** The inputs of a one-file bundle its entry reaches through imports and requires run at load (not import()). */
function evaluatedInputs(metafile: Metafile, entry: string): string[] {
  const seen = new Set<string>();
  const visit = (input: string) => {
    if (seen.has(input)) return;
    seen.add(input);
    for (const imported of metafile.inputs[input]?.imports ?? []) if (imported.kind !== 'dynamic-import' && !imported.external) visit(imported.path);
  };
  visit(entry);
  return [...seen];
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

describe("the router's startup snapshot", () => {
  it("evaluates no HTTP framework while it is built, and of undici its dispatcher alone, not its index's fetch, WebSocket or caches", async () => {
    const result = await build({ stdin: routerSnapshotEntry(), ...snapshotBundleOptions(fileURLToPath(new URL('../dist/test-router-snapshot.cjs', import.meta.url))), write: false, metafile: true });
    const entry = Object.keys(result.metafile.inputs).find((path) => path.endsWith('router-snapshot-entry.ts'))!;
    const inputs = evaluatedInputs(result.metafile, entry);
    const packages = packagesOf(inputs);
    expect(packages).toEqual(expect.arrayContaining(['pino', 'prom-client', 'undici']));
    for (const name of FRAMEWORK) expect(packages.filter((p) => p.startsWith(name)), name).toEqual([]);
    const undici = packageFiles(inputs).filter((file) => file.startsWith('undici/'));
    expect(undici).toContain('undici/lib/dispatcher/agent.js');
    expect(undici.filter((file) => file === 'undici/index.js' || file.startsWith('undici/lib/web/websocket/') || file.startsWith('undici/lib/cache/'))).toEqual([]);
  });
});
