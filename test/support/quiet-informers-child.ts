// Run as a child under the node flags being tested: opens N informers together on a bookmark server (as a router
// opens its watches), lets each hear bookmarks, then prints what a window of them left in the old generation.
// argv: <origin> <ca file> <watches> <warm-up ms> <window ms>
import { readFile } from 'node:fs/promises';
import { Informer, KubeClient } from '../../lib/kube/index.ts';
import { oldGenerationGrowth } from './old-generation.ts';

const [origin, caFile, watches, warmUpMs, windowMs] = process.argv.slice(2);
const ca = await readFile(caFile!);
const credentials = {
  getCurrentCluster: () => ({ server: origin! }),
  applyToHTTPSOptions: async (options: { ca?: Buffer; headers?: Record<string, string> }) => {
    options.ca = ca;
    options.headers = { Authorization: 'Bearer test' };
  },
};
const client = await KubeClient.fromKubeConfig(credentials, { rateLimit: { qps: 10_000, burst: 10_000 } });
const resource = { group: '', version: 'v1', apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
let heard = 0;
for (let i = 0; i < Number(watches); i++) {
  const informer = new Informer({ client, resource, namespace: `t-${i}`, watchList: false });
  informer.on('bookmark', () => heard++);
  informer.start();
}
await new Promise((warm) => setTimeout(warm, Number(warmUpMs)));
const growth = await oldGenerationGrowth();
const before = heard;
await new Promise((window) => setTimeout(window, Number(windowMs)));
const bookmarks = heard - before;
process.stdout.write(`${JSON.stringify({ bookmarks, oldGenerationBytesPerBookmark: growth() / bookmarks })}\n`);
process.exit(0);
