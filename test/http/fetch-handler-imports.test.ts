// The fetch handler's import graph stays runnable without Node: bundling it for a neutral platform
// (no node: built-ins) must succeed and pull in none of the Node-side runtime.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundlePortable } from './portable-bundle.ts';

const entry = fileURLToPath(new URL('../../lib/runtime/fetch-handler.ts', import.meta.url));
const FORBIDDEN = ['fastify', 'pino', 'prom-client', 'undici', 'cloudevents', '@kubernetes/client-node', 'ajv/dist/compile', 'ajv/dist/core'];

describe('the fetch handler import graph', () => {
  it('bundles for a platform without Node and without fastify, pino, prom-client or ajv compilation', async () => {
    const bundle = await bundlePortable(entry);
    const packages = bundle.inputs.filter((path) => path.includes('node_modules/'));
    for (const name of FORBIDDEN) expect(packages.filter((path) => path.includes(`node_modules/${name}`)), name).toEqual([]);
    expect(bundle.inputs.some((path) => path.endsWith('lib/contract/validators.generated.ts'))).toBe(true);
  });

  it('generates no code from strings at run time', async () => {
    const { code } = await bundlePortable(entry);
    expect(code).not.toMatch(/new Function\s*\(|\beval\s*\(/);
  });

  it('fails to bundle an import graph that reaches a node: built-in (the check can fail)', async () => {
    const nodeSide = fileURLToPath(new URL('../../lib/runtime/node-handler.ts', import.meta.url));
    await expect(bundlePortable(nodeSide)).rejects.toThrow(/node:|Could not resolve/);
  });
});
