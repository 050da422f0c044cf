// High availability and outages: two `kubeloop router --leader-elect` processes, the leader killed with
// SIGKILL and the standby taking over within the lease; and a router riding out a kube-apiserver restart
// (on a private control plane, never the shared one), with every pod labelled and each label written once.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Lease, V1Pod, V1PodList } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane } from '../../cli/cluster/index.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { eventually } from '../cluster/eventually.ts';
import { createLoopServiceAccount } from '../support/loop-service-account.ts';
import { inlineLoop, quietLogger, routerHarness, TEST_URL_POLICY, type RouterHarness } from '../support/router-harness.ts';
import { startRouter } from '../../router/start-router.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';

let h: RouterHarness;
let ns: string;
let functionUrl: string;

beforeAll(async () => {
  h = await routerHarness('router-ha');
  ns = h.suite.namespace;
  functionUrl = (await h.serve('pod-name-label')).url;
});
afterAll(async () => h?.close());

async function createAnnotatedPod(client: KubeClient, namespace: string, name: string): Promise<void> {
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/pods`,
    body: { metadata: { name, annotations: { [ANNOTATION]: 'true' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  });
}

async function labelled(client: KubeClient, namespace: string, name: string): Promise<boolean> {
  const pod = await client.request<V1Pod>({ path: `/api/v1/namespaces/${namespace}/pods/${name}` });
  return pod.metadata?.labels?.[LABEL] === name;
}

function startRouterProcess(identity: string, kubeconfig: string, loopsFile: string): ChildProcess {
  const child = spawn(
    process.execPath,
    ['cli/bin.js', 'router', '--kubeconfig', kubeconfig, '--loops', loopsFile, '--leader-elect', '--lease-namespace', ns, '--lease-duration-seconds', '4', '--identity', identity, '--port', '0', '--log-level', 'warn', '--allow-loopback-functions'],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, KUBELOOP_FROM_SOURCE: '1' } },
  );
  return child;
}

describe('router high availability', () => {
  it('a standby takes over within the lease duration when the leader is killed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-ha-'));
    const loopsFile = join(dir, 'loops.yaml');
    const loop = inlineLoop('pod-name-label', ns, { for: { apiVersion: 'v1', kind: 'Pod' }, metadataOnly: true, function: { url: functionUrl } });
    writeFileSync(loopsFile, JSON.stringify(loop));
    const routers = new Map<string, ChildProcess>([
      ['router-a', startRouterProcess('router-a', h.suite.kubeconfigPath, loopsFile)],
      ['router-b', startRouterProcess('router-b', h.suite.kubeconfigPath, loopsFile)],
    ]);
    try {
      const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/kubeloop-router`;
      const leader = await eventually('a leader', async () => (await h.client.request<V1Lease>({ path: leasePath })).spec?.holderIdentity || undefined, 60_000);
      expect(['router-a', 'router-b']).toContain(leader);
      await createAnnotatedPod(h.client, ns, 'before-kill');
      await eventually('labelled by the leader', () => labelled(h.client, ns, 'before-kill'), 30_000);

      routers.get(leader)?.kill('SIGKILL');
      const killedAt = Date.now();
      await createAnnotatedPod(h.client, ns, 'after-kill');
      const standby = leader === 'router-a' ? 'router-b' : 'router-a';
      await eventually('the standby holds the lease', async () => (await h.client.request<V1Lease>({ path: leasePath })).spec?.holderIdentity === standby, 30_000);
      await eventually('labelled by the new leader', () => labelled(h.client, ns, 'after-kill'), 30_000);
      // Takeover happens within the lease (4 s) plus one retry period and a start-up; a broad bound.
      expect(Date.now() - killedAt).toBeLessThan(20_000);
    } finally {
      for (const child of routers.values()) child.kill('SIGKILL');
    }
  }, 120_000);

  it('rides out a kube-apiserver restart and labels every pod exactly once', async () => {
    const plane = await startControlPlane({ nodes: 1 });
    const client = await KubeClient.fromKubeConfig(plane.kubeConfig());
    await createLoopServiceAccount(client, { namespace: 'default' });
    const router = await startRouter({
      kubeConfig: plane.kubeConfig(),
      logger: quietLogger(),
      urlPolicy: TEST_URL_POLICY,
      loops: [inlineLoop('pod-name-label', 'default', { for: { apiVersion: 'v1', kind: 'Pod' }, metadataOnly: true, function: { url: functionUrl } })],
    });
    try {
      await router.waitForLoop('pod-name-label');
      await eventually('default ServiceAccount', async () => client.request({ path: '/api/v1/namespaces/default/serviceaccounts/default' }), 30_000);
      await createAnnotatedPod(client, 'default', 'p1');
      await eventually('p1 labelled', () => labelled(client, 'default', 'p1'), 30_000);

      await plane.restartApiServer();
      await createAnnotatedPod(client, 'default', 'p2');
      await eventually('p2 labelled after the restart', () => labelled(client, 'default', 'p2'), 60_000);
      const list = await client.request<V1PodList>({ path: '/api/v1/namespaces/default/pods' });
      expect(list.items.map((p) => p.metadata?.labels?.[LABEL]).sort()).toEqual(['p1', 'p2']);

      const metrics = await router.metrics.registry.getMetricsAsJSON();
      const value = (name: string, labels: Record<string, string>) =>
        (metrics.find((m) => m.name === name)?.values ?? []).filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((a, v) => a + v.value, 0);
      expect(value('kubeloop_router_watch_restarts_total', {})).toBeGreaterThan(0);
      // One applied label patch per pod: nothing done twice.
      expect(value('kubeloop_router_actions_total', { op: 'patch', result: 'applied' })).toBe(2);
    } finally {
      await router.stop();
      await client.close();
      await plane.stop();
    }
  }, 180_000);
});
