// The production bundles' plugins: a dependency's top-level require of node:https (fastify, prom-client) no longer
// loads Node's TLS stack until something uses it, and using it still works.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { productionBundleOptions, productionPlugins } from './bundle-options.js';

const run = promisify(execFile);
let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-bundle-options-'));
  // A CommonJS dependency as fastify writes it: node:https required at the top, used only when serving TLS.
  await writeFile(join(dir, 'dependency.cjs'), "const https = require('node:https');\nexports.serveTls = () => typeof https.createServer;\n");
  await writeFile(
    join(dir, 'entry.mjs'),
    [
      "import dependency from './dependency.cjs';",
      "const loaded = () => process.moduleLoadList.filter((m) => /^NativeModule (https|tls|_tls_wrap)$/.test(m));",
      'const before = loaded();',
      'const used = dependency.serveTls();',
      'console.log(JSON.stringify({ before, used, after: loaded() }));',
    ].join('\n'),
  );
  await build({ entryPoints: [join(dir, 'entry.mjs')], plugins: productionPlugins, ...productionBundleOptions(join(dir, 'out')) });
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('lazyTlsBuiltins (cli/bundle-options.js)', () => {
  it('loads node:https on first use, not when a dependency requires it', async () => {
    const { stdout } = await run(process.execPath, [join(dir, 'out', 'entry.mjs')]);
    const { before, used, after } = JSON.parse(stdout) as { before: string[]; used: string; after: string[] };
    expect(before).toEqual([]);
    expect(used).toBe('function');
    expect(after).toContain('NativeModule https');
  });
});
