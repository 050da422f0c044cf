// yaml is imported where a file is parsed (a kubeconfig, a --loops file), not at start-up: bundled with the
// production settings, those imports must still work (an esbuild bundle's import() of CommonJS yaml has only a
// default export; a kubeconfig that failed to parse fell back to client-node, ~1 s of CPU and ~48 MiB).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry, type BundledEntry } from '../test/support/bundled-entry.ts';

const source = (path: string) => JSON.stringify(fileURLToPath(new URL(`../${path}`, import.meta.url)));
let bundle: BundledEntry | undefined;

beforeAll(async () => {
  bundle = await bundleEntry('entry.ts', (dir) => ({
    kubeconfig: 'clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n',
    'loops.yaml': 'kind: ClusterLoop\nmetadata: { name: a }\nspec: { for: { apiVersion: v1, kind: Pod }, serviceAccount: { namespace: ns, name: a }, function: { url: "http://fn.ns.svc/" } }\n',
    'entry.ts': [
      `import { simpleKubeconfig } from ${source('lib/kube/kube-config.ts')};`,
      `import { readLoopsFile } from ${source('router/router-config.ts')};`,
      `const credentials = await simpleKubeconfig(${JSON.stringify(join(dir, 'kubeconfig'))});`,
      `const loops = await readLoopsFile(${JSON.stringify(join(dir, 'loops.yaml'))});`,
      'console.log(JSON.stringify({ server: credentials?.getCurrentCluster()?.server, loops: loops.map((l) => l.metadata.name) }));',
    ].join('\n'),
  }));
}, 60_000);

afterAll(async () => {
  await bundle?.remove();
});

describe('yaml imported on use, in the production bundle', () => {
  it('reads a kubeconfig file itself (no client-node) and a --loops file', async () => {
    expect(await bundle!.run()).toEqual({ server: 'https://127.0.0.1:9', loops: ['a'] });
  });
});
