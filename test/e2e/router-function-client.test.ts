// The router's function client against the real control plane: a function answering ~15 MiB of empty
// objects to 8 calls at once is refused before parsing (the router process stays up, its memory bounded,
// another Loop keeps reconciling, the Loop reports it), and a Loop whose Service leads to the metadata
// address or the API server (ExternalName, hand-made EndpointSlice) is never called (nothing records a
// call; the Loop says why).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Router } from '../../router/start-router.ts';
import { eventually } from '../cluster/eventually.ts';
import { startFloodServer, type FloodServer } from '../http/flood-server.ts';
import { installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';
const MiB = 1024 * 1024;

let h: RouterHarness;
let ns: string;
let router: Router;
let flood: FloodServer;
/** A function that records every call and answers nothing useful: it must never be reached. */
let recorder: Server;
let recorderPort = 0;
let recorded = 0;

beforeAll(async () => {
  h = await routerHarness('router-function-client');
  ns = h.suite.namespace;
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml']);
  flood = await startFloodServer();
  recorder = createServer((req, res) => {
    recorded++;
    req.resume();
    res.writeHead(500).end();
  });
  await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', r));
  recorderPort = (recorder.address() as AddressInfo).port;
  // As `kubeloop dev` runs it: outside the cluster, cluster Service URLs connect to 127.0.0.1 (same port).
  router = await h.router(undefined, { loopSelector: h.loopSelector, connectServicesTo: '127.0.0.1' });
});
afterAll(async () => {
  flood?.close();
  recorder?.close();
  await h?.close();
});

const ready = async (loop: string) => (await h.loopStatus(loop)).ready;
const waitReason = (loop: string, reason: string) =>
  eventually(`Loop ${loop} Ready=False ${reason}`, async () => {
    const c = await ready(loop);
    return c?.status === 'False' && c.reason === reason && c;
  }, 60_000);

async function warnings(object: string): Promise<Array<{ reason: string; message: string }>> {
  const list = await h.client.request<{ items: Array<{ reason: string; message: string; type: string }> }>({
    path: `/api/v1/namespaces/${ns}/events`,
    query: { fieldSelector: `involvedObject.name=${object}` },
  });
  return list.items.filter((e) => e.type === 'Warning');
}

async function configMap(name: string, loop: string): Promise<void> {
  await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name, labels: { case: loop } } } });
}

describe('a reply bomb', () => {
  it('refuses ~15 MiB of empty objects to 8 calls at once; the router stays up and another Loop keeps reconciling', async () => {
    const healthy = await h.serve('pod-name-label');
    await h.createLoop('healthy', {
      for: { apiVersion: 'v1', kind: 'Pod' },
      namespaces: [ns],
      serviceAccount: h.loopServiceAccount,
      selector: { matchLabels: { case: 'healthy' } },
      metadataOnly: true,
      function: { url: healthy.url },
    });
    await h.createLoop('bomb', {
      for: { apiVersion: 'v1', kind: 'ConfigMap' },
      namespaces: [ns],
      serviceAccount: h.loopServiceAccount,
      selector: { matchLabels: { case: 'bomb' } },
      metadataOnly: true,
      function: { url: `${flood.base}/bomb`, maxConcurrency: 8, timeoutSeconds: 60 },
    });
    await router.waitForLoop('bomb');
    const rssBefore = process.memoryUsage().rss;
    await Promise.all(Array.from({ length: 8 }, (_, i) => configMap(`bomb-${i}`, 'bomb')));

    const condition = await waitReason('bomb', 'InvalidResponse');
    expect(condition.message).toMatch(/holds more than 200000 JSON values; refused before parsing/);
    const events = await eventually('a Warning event on a bombed ConfigMap', async () => {
      const found = await warnings('bomb-0');
      return found.length > 0 && found;
    }, 60_000);
    expect(events[0]).toMatchObject({ reason: expect.stringMatching(/InvalidResponse|Overloaded/) });
    const calls = await router.metrics.functionCalls.get();
    expect(calls.values.some((v) => v.labels.loop === 'bomb' && v.labels.code === 'invalid' && v.value > 0)).toBe(true);

    // The same router process, still reconciling another Loop.
    await h.client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/pods`,
      body: { metadata: { name: 'after-bomb', labels: { case: 'healthy' }, annotations: { [ANNOTATION]: 'true' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    await eventually('the other Loop to label its pod', async () => {
      const pod = await h.client.request<V1Pod>({ path: `/api/v1/namespaces/${ns}/pods/after-bomb` });
      return pod.metadata?.labels?.[LABEL] === 'after-bomb';
    }, 60_000);
    expect(router.ready()).toBe(true);
    // Parsing one such reply alone grows the heap by well over a GiB; counted, the router holds raw bytes only.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(400 * MiB);
  });
});

describe('addresses a Loop URL leads to', () => {
  async function selectorlessService(name: string, address: string, port: number): Promise<void> {
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/services`, body: { metadata: { name }, spec: { ports: [{ port: recorderPort }] } } });
    await h.client.request({
      method: 'POST',
      path: `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
      body: {
        metadata: { name: `${name}-hand-made`, labels: { 'kubernetes.io/service-name': name } },
        addressType: 'IPv4',
        endpoints: [{ addresses: [address] }],
        ports: [{ port }],
      },
    });
  }

  async function addressLoop(name: string, service: string): Promise<void> {
    await h.createLoop(name, {
      for: { apiVersion: 'v1', kind: 'ConfigMap' },
      namespaces: [ns],
      serviceAccount: h.loopServiceAccount,
      selector: { matchLabels: { case: name } },
      metadataOnly: true,
      // The port is the recorder's: were the address not checked, the call would land there.
      function: { url: `http://${service}.${ns}.svc:${recorderPort}/` },
    });
    await configMap(`${name}-a`, name);
  }

  it('never calls an ExternalName Service naming the metadata address', async () => {
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/services`, body: { metadata: { name: 'external' }, spec: { type: 'ExternalName', externalName: '169.254.169.254' } } });
    await addressLoop('to-metadata', 'external');
    const condition = await waitReason('to-metadata', 'AddressRefused');
    expect(condition.message).toContain(`Service external.${ns}.svc leads to 169.254.169.254, a link-local address (cloud metadata lives there); not called`);
    expect(recorded).toBe(0);
  });

  it('never calls an ExternalName Service naming the API server', async () => {
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/services`, body: { metadata: { name: 'api-alias' }, spec: { type: 'ExternalName', externalName: 'kubernetes.default.svc.cluster.local' } } });
    await addressLoop('to-api-alias', 'api-alias');
    const condition = await waitReason('to-api-alias', 'AddressRefused');
    expect(condition.message).toMatch(/, the Kubernetes API server; not called/);
    expect(recorded).toBe(0);
  });

  it("never calls a selector-less Service whose hand-made EndpointSlice points at the API server's address", async () => {
    // The API server refuses link-local and loopback endpoints itself; the kubernetes Service's address it accepts.
    const kubernetes = await h.client.request<V1Service>({ path: '/api/v1/namespaces/default/services/kubernetes' });
    await selectorlessService('apiserver', kubernetes.spec!.clusterIP!, recorderPort);
    await addressLoop('to-apiserver', 'apiserver');
    const condition = await waitReason('to-apiserver', 'AddressRefused');
    expect(condition.message).toMatch(/, the Kubernetes API server; not called/);
    expect(recorded).toBe(0);
  });

  it("in dev, where loopback functions are allowed, never calls the local API server's port", async () => {
    const server = new URL(h.client.server);
    await h.createLoop('to-local-apiserver', {
      for: { apiVersion: 'v1', kind: 'ConfigMap' },
      namespaces: [ns],
      serviceAccount: h.loopServiceAccount,
      selector: { matchLabels: { case: 'to-local-apiserver' } },
      metadataOnly: true,
      function: { url: `http://127.0.0.1:${server.port}/` },
    });
    await configMap('to-local-apiserver-a', 'to-local-apiserver');
    const condition = await waitReason('to-local-apiserver', 'AddressRefused');
    expect(condition.message).toContain(`127.0.0.1:${server.port} is the Kubernetes API server; not called`);
  });
});
