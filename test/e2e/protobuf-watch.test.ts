// A metadata-only watch in protobuf against the real API server: the server answers it in protobuf (for built-in
// kinds and custom resources alike), and every event decodes to what the same watch in JSON says, managedFields
// aside; a metadata-only informer fills and follows its cache from that stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubernetesObject } from '@kubernetes/client-node';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { Informer } from '../../lib/kube/informer.ts';
import { METADATA_JSON_ACCEPT, METADATA_OBJECT_ACCEPT } from '../../lib/kube/metadata-media-types.ts';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { consumeWatchBody } from '../../lib/kube/watch-body.ts';
import type { WatchEvent } from '../../lib/kube/watch-stream.ts';
import { retryTransient } from '../../lib/kube/transient.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { installCrds, looseCrd } from '../support/router-harness.ts';
import { comparableObject, writeEverything } from '../support/metadata-writes.ts';

let suite: ClusterSuite;
let client: KubeClient;
const GROUP = 'protobuf-watch.e2e.kubeloop.dev';

beforeAll(async () => {
  suite = await setupClusterSuite('protobuf-watch');
  client = await KubeClient.fromKubeConfig(suite.kubeConfig);
  await installCrds(client, [looseCrd(GROUP, 'Gadget', 'gadgets')]);
});
afterAll(async () => {
  await client?.close();
  await suite?.cleanup();
});

/** `count` events of a watch of `path` from `resourceVersion`, asked with `accept`, and the media type it came in. */
async function watchEvents(path: string, resourceVersion: string, accept: string, count: number): Promise<{ contentType: string; events: Array<WatchEvent<KubernetesObject>> }> {
  const abort = new AbortController();
  const { body, contentType } = await client.streamResponse({ path, accept, signal: abort.signal, query: { watch: true, resourceVersion, timeoutSeconds: 30 } });
  const events: Array<WatchEvent<KubernetesObject>> = [];
  try {
    // Ended here once `count` came: the destroyed body then rejects, which only matters short of `count`.
    await consumeWatchBody<KubernetesObject>(body, contentType, {}, (batch) => {
      events.push(...batch);
      if (events.length >= count) body.destroy();
    }).catch((error: unknown) => {
      if (events.length < count) throw error;
    });
  } finally {
    abort.abort();
    body.destroy();
  }
  return { contentType, events };
}

/** An event as the router keeps it: its object as comparableObject gives it. */
function comparable(event: WatchEvent<KubernetesObject>): unknown {
  return { type: event.type, object: comparableObject(event.object) };
}

describe('a metadata-only watch in protobuf', () => {
  it.each([
    ['ConfigMaps (built in)', 'v1', 'ConfigMap', () => `/api/v1/namespaces/${suite.namespace}/configmaps`],
    ['a custom resource', `${GROUP}/v1`, 'Gadget', () => `/apis/${GROUP}/v1/namespaces/${suite.namespace}/gadgets`],
  ])('%s: the server answers in protobuf, and each event reads as in JSON but for managedFields', async (_name, apiVersion, kind, pathOf) => {
    const path = pathOf();
    // A custom resource's storage answers 429 "(re)initializing" for a moment after its CRD is established.
    const start = await retryTransient(() => client.request<{ metadata: { resourceVersion: string } }>({ path }), { timeoutMs: 30_000 });
    await writeEverything(client, path, apiVersion, kind);
    // owner ADDED, child ADDED, owner MODIFIED, held ADDED, held MODIFIED (deletionTimestamp).
    const count = 5;
    const protobuf = await watchEvents(path, start.metadata.resourceVersion, METADATA_OBJECT_ACCEPT, count);
    const json = await watchEvents(path, start.metadata.resourceVersion, METADATA_JSON_ACCEPT, count);
    expect(protobuf.contentType).toMatch(/^application\/vnd\.kubernetes\.protobuf;stream=watch/);
    expect(json.contentType).toMatch(/^application\/json/);
    expect(protobuf.events.map(comparable)).toEqual(json.events.map(comparable));
    // The decoded objects carry no managedFields, where the JSON ones did.
    expect(json.events.some((event) => event.object.metadata?.managedFields)).toBe(true);
    expect(protobuf.events.some((event) => event.object.metadata?.managedFields)).toBe(false);
    expect(protobuf.events.some((event) => event.object.metadata?.deletionTimestamp && event.object.metadata.deletionGracePeriodSeconds === 0)).toBe(true);
  });

  it('a metadata-only informer fills its cache by WatchList in protobuf and follows changes', async () => {
    const path = `/api/v1/namespaces/${suite.namespace}/configmaps`;
    for (const name of ['one', 'two', 'three']) await client.request({ method: 'POST', path, body: { metadata: { name, labels: { set: 'informer' } } } });
    const informer = new Informer({ client, resource: await new ResourceDiscovery(client).resolve('v1', 'ConfigMap'), namespace: suite.namespace, labelSelector: 'set=informer', metadataOnly: true });
    try {
      informer.start();
      await informer.waitForSync();
      expect(informer.filledBy).toBe('watch-list');
      expect(informer.store.list().map((o) => o.metadata?.name).sort()).toEqual(['one', 'three', 'two']);
      const changed = new Promise<KubernetesObject>((resolve) => informer.on('update', (object) => resolve(object)));
      await client.request({ method: 'PATCH', path: `${path}/two`, contentType: 'application/merge-patch+json', body: { metadata: { annotations: { seen: 'by-protobuf' } } } });
      expect((await changed).metadata?.annotations).toEqual({ seen: 'by-protobuf' });
    } finally {
      await informer.stop();
    }
  });
});
