// The production bundles' plugins: a dependency's top-level require of node:https (fastify, prom-client) no longer
// loads Node's TLS stack until something uses it; our ES imports of built-ins load no module their getters would;
// the deferred requires of pino's and prom-client's dependencies load nothing until used; all of it still works.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deferRequires } from './deferred-requires.js';
import { bundleEntry, type BundledEntry } from '../test/support/bundled-entry.ts';

const resolve = createRequire(import.meta.url).resolve;
let bundle: BundledEntry | undefined;

beforeAll(async () => {
  bundle = await bundleEntry('entry.mjs', () => ({
    // A CommonJS dependency as fastify writes it: node:https required at the top, used only when serving TLS.
    'dependency.cjs': "const https = require('node:https');\nexports.serveTls = () => typeof https.createServer;\n",
    'entry.mjs': [
      "import dependency from './dependency.cjs';",
      "import { readFileSync } from 'node:fs';",
      "import { parseArgs } from 'node:util';",
      "import { createHmac } from 'node:crypto';",
      `import pino from ${JSON.stringify(resolve('pino'))};`,
      `import { Registry } from ${JSON.stringify(resolve('prom-client'))};`,
      "const loaded = () => process.moduleLoadList.filter((m) => /^NativeModule (https|tls|_tls_wrap|internal\\/fs\\/promises|internal\\/crypto\\/webcrypto|internal\\/deps\\/undici\\/undici|zlib|assert)$/.test(m));",
      "const logger = pino({}, pino.destination({ dest: 1, sync: false }));",
      'const before = loaded();',
      'const used = dependency.serveTls();',
      "const works = [typeof readFileSync, typeof parseArgs({ args: [], options: {} }).values, createHmac('sha256', 'k').update('x').digest('hex').length, typeof new Registry().metrics, typeof logger.info];",
      'console.log(JSON.stringify({ before, used, works, after: loaded() }));',
    ].join('\n'),
  }));
}, 60_000);

afterAll(async () => {
  await bundle?.remove();
});

describe('the production bundle plugins (cli/bundle-options.js)', () => {
  it('loads node:https on first use, not when a dependency requires it', async () => {
    const { before, used, after } = (await bundle!.run()) as { before: string[]; used: string; after: string[] };
    expect(before).not.toContain('NativeModule https');
    expect(used).toBe('function');
    expect(after).toContain('NativeModule https');
  });

  it("imports built-ins without loading what their getters would (fs/promises, webcrypto, undici), and pino's and prom-client's unused zlib and assert", async () => {
    const { before, works } = (await bundle!.run()) as { before: string[]; works: unknown[] };
    expect(before).toEqual([]);
    expect(works).toEqual(['function', 'object', 64, 'function', 'function']);
  });
});

describe('deferRequires (cli/deferred-requires.js)', () => {
  it('moves a require to its use, and fails the build when the dependency no longer holds the line', () => {
    expect(deferRequires('sonic-boom/index.js', "const assert = require('assert')\nassert(true)\n")).toBe("const assert = (...args) => require('assert')(...args)\nassert(true)\n");
    expect(() => deferRequires('sonic-boom/index.js', "const assert = require('node:assert')\n")).toThrow(/sonic-boom\/index.js no longer holds exactly one/);
  });
});
