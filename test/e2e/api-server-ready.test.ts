// assertApiServerReady (lib/kube/api-server-ready.ts), which the gateway asks before it judges its hooks, against the
// real control plane: a ready server passes for any identity (readiness is public), one not listening does not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../cli/cluster/free-port.ts';
import { ApiServerNotReady, assertApiServerReady } from '../../lib/kube/api-server-ready.ts';
import { KubeClient, serviceAccountUser } from '../../lib/kube/index.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';

let suite: ClusterSuite;
let admin: KubeClient;
beforeAll(async () => {
  suite = await setupClusterSuite('api-server-ready');
  admin = await KubeClient.fromKubeConfig(suite.kubeConfig);
});
afterAll(async () => {
  await admin?.close();
  await suite?.cleanup();
});

describe('assertApiServerReady against the local control plane', () => {
  it('resolves for the running API server, as cluster admin and as a ServiceAccount RBAC grants nothing', async () => {
    await expect(assertApiServerReady(admin)).resolves.toBeUndefined();
    const nobody = admin.impersonating({ user: serviceAccountUser(suite.namespace, 'granted-nothing') }, { qps: 5, burst: 10 });
    await expect(assertApiServerReady(nobody)).resolves.toBeUndefined();
  });

  it('throws ApiServerNotReady when nothing listens where the API server should be', async () => {
    const server = `https://127.0.0.1:${await freePort()}`;
    const client = await KubeClient.fromKubeConfig({ getCurrentCluster: () => ({ server }), applyToHTTPSOptions: async () => {} });
    try {
      const failure = await assertApiServerReady(client).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ApiServerNotReady);
      expect((failure as Error).message).toMatch(/ECONNREFUSED/);
    } finally {
      await client.close();
    }
  });
});
