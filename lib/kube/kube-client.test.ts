import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, serviceAccountGroups, serviceAccountUser } from './kube-client.ts';

// A plain HTTP server on loopback stands in for the API server: these tests are about the headers and the
// rate limits the client applies, not about Kubernetes.
const seen: IncomingHttpHeaders[] = [];
const server = createServer((req, res) => {
  seen.push(req.headers);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"kind":"Status"}');
});
let kubeConfig: KubeConfig;

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'router', token: 'router-token' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'router' }],
    currentContext: 'c',
  });
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('KubeClient.impersonating', () => {
  it('sends the router\'s credentials with Impersonate-User, and the parent sends none', async () => {
    seen.length = 0;
    const router = await KubeClient.fromKubeConfig(kubeConfig);
    const loop = router.impersonating({ user: serviceAccountUser('team-a', 'reconciler') }, { qps: 10, burst: 10 });
    await loop.request({ path: '/api/v1/namespaces/team-a/pods' });
    await router.request({ path: '/api/v1/namespaces' });
    expect(seen[0]).toMatchObject({ authorization: 'Bearer router-token', 'impersonate-user': 'system:serviceaccount:team-a:reconciler' });
    expect(seen[1]?.authorization).toBe('Bearer router-token');
    expect(seen[1]?.['impersonate-user']).toBeUndefined();
    expect(loop.impersonatedUser).toBe('system:serviceaccount:team-a:reconciler');
    // Closing a Loop's client leaves the shared connections to the router.
    await loop.close();
    await router.request({ path: '/api/v1/namespaces' });
    await router.close();
  });

  it('gives each impersonating client its own budget: one spent bucket does not hold up another', { timeout: 20_000 }, async () => {
    const router = await KubeClient.fromKubeConfig(kubeConfig, { rateLimit: { qps: 0.25, burst: 1 } });
    // A bucket that refills every 4 s: the requests below finish long before greedy's second one may go.
    const greedy = router.impersonating({ user: 'system:serviceaccount:a:greedy' }, { qps: 0.25, burst: 1 });
    const other = router.impersonating({ user: 'system:serviceaccount:a:other' }, { qps: 1, burst: 1 });
    await greedy.request({ path: '/api/v1/a' });
    // greedy's next request waits for its bucket; the other Loop's and the router's (its first token) do not.
    const queued = greedy.request({ path: '/api/v1/b' });
    let greedyDone = false;
    void queued.then(() => (greedyDone = true));
    await other.request({ path: '/api/v1/c' });
    await router.request({ path: '/api/v1/d' });
    expect(greedyDone).toBe(false);
    await queued;
    await router.close();
  });
});

describe('serviceAccountGroups', () => {
  it('names the groups the API server gives every ServiceAccount', () => {
    expect(serviceAccountGroups('team-a')).toEqual(['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated']);
  });
});
