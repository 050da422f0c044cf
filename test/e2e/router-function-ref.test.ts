// spec.function.ref on the real control plane: a Loop naming its function by a Service, or by a Knative
// Service's status.address.url, is Ready=False and sends nothing until the reference resolves, then calls
// the function there. The router runs outside the cluster, so it connects to 127.0.0.1 for Service hosts
// (--connect-services-to), keeping the port: each Service here exposes the port the function listens on.
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionRef } from '../../api/loop.ts';
import { eventually } from '../cluster/eventually.ts';
import { knativeServingCrdFiles } from './go-module-crds.ts';
import { installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';

let h: RouterHarness;
let ns: string;
let port: number;

beforeAll(async () => {
  h = await routerHarness('router-function-ref');
  ns = h.suite.namespace;
  const knativeService = (await knativeServingCrdFiles()).find((file) => file.endsWith(join('300-resources', 'service.yaml')));
  if (!knativeService) throw new Error('Knative Serving has no config/core/300-resources/service.yaml');
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml', knativeService]);
  port = Number(new URL((await h.serve('pod-name-label')).url).port);
  await h.router(undefined, { loopSelector: h.loopSelector, connectServicesTo: '127.0.0.1' });
}, 300_000);
afterAll(async () => {
  await h?.close();
});

async function createLoop(name: string, ref: FunctionRef): Promise<void> {
  await h.createLoop(name, {
    for: { apiVersion: 'v1', kind: 'Pod' },
    namespaces: [ns],
    selector: { matchLabels: { loop: name } },
    metadataOnly: true,
    serviceAccount: h.loopServiceAccount,
    function: { ref },
  });
}

const readyCondition = async (name: string) => (await h.loopStatus(name)).ready;

async function annotatedPod(name: string, loop: string): Promise<void> {
  await h.client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/pods`,
    body: { metadata: { name, labels: { loop }, annotations: { [ANNOTATION]: 'true' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  });
}

const labelOf = async (name: string) => (await h.client.request<V1Pod>({ path: `/api/v1/namespaces/${ns}/pods/${name}` })).metadata?.labels?.[LABEL];

describe('spec.function.ref', () => {
  it('waits Ready=False for a Service that does not exist, then calls it at <name>.<ns>.svc.cluster.local:<port>', async () => {
    const loop = `svc-ref-${ns}`;
    await createLoop(loop, { name: 'labeller', namespace: ns, port });
    const missing = await eventually('Ready=False FunctionRefNotFound', async () => {
      const ready = await readyCondition(loop);
      return ready?.reason === 'FunctionRefNotFound' && ready;
    });
    expect(missing.status).toBe('False');
    expect(missing.message).toContain(`Service ${ns}/labeller does not exist`);
    await annotatedPod('via-service', loop);

    await h.client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/services`,
      body: { metadata: { name: 'labeller' }, spec: { ports: [{ name: 'http', port, protocol: 'TCP' }] } },
    });
    await eventually('the pod labelled through the Service reference', async () => (await labelOf('via-service')) === 'via-service');
    const running = await readyCondition(loop);
    expect(running).toMatchObject({ status: 'True', reason: 'Running' });
    expect(running?.message).toContain(`http://labeller.${ns}.svc.cluster.local:${port}/`);
  });

  it('takes a Knative Service URL from status.address.url once it is set', async () => {
    const loop = `ksvc-ref-${ns}`;
    await h.client.request({
      method: 'POST',
      path: `/apis/serving.knative.dev/v1/namespaces/${ns}/services`,
      body: { apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name: 'kn-labeller' }, spec: { template: { spec: { containers: [{ image: 'registry.local/pod-name-label:1' }] } } } },
    });
    await createLoop(loop, { apiVersion: 'serving.knative.dev/v1', name: 'kn-labeller', namespace: ns });
    await eventually('Ready=False FunctionRefNotReady', async () => (await readyCondition(loop))?.reason === 'FunctionRefNotReady');
    await annotatedPod('via-knative', loop);

    // What Knative's controller would write once the Service is routable (no Knative controller runs here).
    await h.client.request({
      method: 'PATCH',
      path: `/apis/serving.knative.dev/v1/namespaces/${ns}/services/kn-labeller/status`,
      contentType: 'application/merge-patch+json',
      body: { status: { address: { url: `http://kn-labeller.${ns}.svc.cluster.local:${port}` } } },
    });
    await eventually('the pod labelled through the Knative Service reference', async () => (await labelOf('via-knative')) === 'via-knative');
    expect(await readyCondition(loop)).toMatchObject({ status: 'True', reason: 'Running' });
  });
});
