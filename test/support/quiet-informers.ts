// N informers opened together on a bookmark server (test/support/bookmark-server.ts), one namespace each, as a router
// opens its watches. `kube` is this tree's lib/kube or another checkout's, for a before/after.
type Kube = typeof import('../../lib/kube/index.ts');

/** Starts `watches` ConfigMap informers on `origin`; returns what reads the bookmarks heard so far. */
export async function startQuietInformers(kube: Kube, origin: string, ca: Buffer | string, watches: number): Promise<() => number> {
  const credentials = {
    getCurrentCluster: () => ({ server: origin }),
    applyToHTTPSOptions: async (options: { ca?: Buffer | string; headers?: Record<string, string> }) => {
      options.ca = ca;
      options.headers = { Authorization: 'Bearer test' };
    },
  };
  const client = await kube.KubeClient.fromKubeConfig(credentials, { rateLimit: { qps: 10_000, burst: 10_000 } });
  const resource = { group: '', version: 'v1', apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
  let heard = 0;
  for (let i = 0; i < watches; i++) {
    const informer = new kube.Informer({ client, resource, namespace: `t-${i}`, watchList: false });
    informer.on('bookmark', () => heard++);
    informer.start();
  }
  return () => heard;
}
