// The production bundles' plugins: a dependency's top-level require of node:https (fastify, prom-client) no longer
// loads Node's TLS stack until something uses it, and using it still works.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry, type BundledEntry } from '../test/support/bundled-entry.ts';

let bundle: BundledEntry | undefined;

beforeAll(async () => {
  bundle = await bundleEntry('entry.mjs', () => ({
    // A CommonJS dependency as fastify writes it: node:https required at the top, used only when serving TLS.
    'dependency.cjs': "const https = require('node:https');\nexports.serveTls = () => typeof https.createServer;\n",
    'entry.mjs': [
      "import dependency from './dependency.cjs';",
      "const loaded = () => process.moduleLoadList.filter((m) => /^NativeModule (https|tls|_tls_wrap)$/.test(m));",
      'const before = loaded();',
      'const used = dependency.serveTls();',
      'console.log(JSON.stringify({ before, used, after: loaded() }));',
    ].join('\n'),
  }));
}, 60_000);

afterAll(async () => {
  await bundle?.remove();
});

describe('lazyTlsBuiltins (cli/bundle-options.js)', () => {
  it('loads node:https on first use, not when a dependency requires it', async () => {
    const { before, used, after } = (await bundle!.run()) as { before: string[]; used: string; after: string[] };
    expect(before).toEqual([]);
    expect(used).toBe('function');
    expect(after).toContain('NativeModule https');
  });
});
