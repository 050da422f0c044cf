// yaml is imported where a file is parsed (a kubeconfig, a --loops file), not at start-up: bundled with the
// production settings, those imports must still work (an esbuild bundle's import() of CommonJS yaml has only a
// default export; a kubeconfig that failed to parse fell back to client-node, ~1 s of CPU and ~48 MiB).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { productionBundleOptions, productionPlugins } from './bundle-options.js';

const run = promisify(execFile);
const source = (path: string) => JSON.stringify(fileURLToPath(new URL(`../${path}`, import.meta.url)));
let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-bundle-yaml-'));
  await writeFile(join(dir, 'kubeconfig'), 'clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n');
  await writeFile(join(dir, 'loops.yaml'), 'kind: ClusterLoop\nmetadata: { name: a }\nspec: { for: { apiVersion: v1, kind: Pod }, serviceAccount: { namespace: ns, name: a }, function: { url: "http://fn.ns.svc/" } }\n');
  await writeFile(
    join(dir, 'entry.ts'),
    [
      `import { simpleKubeconfig } from ${source('lib/kube/kube-config.ts')};`,
      `import { readLoopsFile } from ${source('router/router-config.ts')};`,
      `const credentials = await simpleKubeconfig(${JSON.stringify(join(dir, 'kubeconfig'))});`,
      `const loops = await readLoopsFile(${JSON.stringify(join(dir, 'loops.yaml'))});`,
      'console.log(JSON.stringify({ server: credentials?.getCurrentCluster()?.server, loops: loops.map((l) => l.metadata.name) }));',
    ].join('\n'),
  );
  await build({ entryPoints: [join(dir, 'entry.ts')], plugins: productionPlugins, ...productionBundleOptions(join(dir, 'out')) });
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('yaml imported on use, in the production bundle', () => {
  it('reads a kubeconfig file itself (no client-node) and a --loops file', async () => {
    const { stdout } = await run(process.execPath, [join(dir, 'out', 'entry.mjs')]);
    expect(JSON.parse(stdout)).toEqual({ server: 'https://127.0.0.1:9', loops: ['a'] });
  });
});
