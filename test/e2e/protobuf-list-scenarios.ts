// The metadata-only-list-in-protobuf e2e scenarios, run on the current control plane (protobuf-list.test.ts) and the
// oldest supported one (protobuf-list-oldest.test.ts): the server answers in protobuf (built-in kinds and custom
// resources alike), each page, paged with limit/continue, decodes to what the same page in JSON says, managedFields
// aside; a refusal reads the same in both; a metadata-only informer relists from protobuf after its watch's 410.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubernetesObject } from '@kubernetes/client-node';
import { KubeClient, type KubeRequest } from '../../lib/kube/kube-client.ts';
import { Informer } from '../../lib/kube/informer.ts';
import { METADATA_LIST_ACCEPT, METADATA_LIST_JSON_ACCEPT } from '../../lib/kube/metadata-media-types.ts';
import { decodeMetadataList, type MetadataListPage } from '../../lib/kube/protobuf-list.ts';
import { isProtobufMediaType } from '../../lib/kube/protobuf-watch-stream.ts';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { shardFieldValue, shardSelector, shardSlot } from '../../lib/kube/shard-selector.ts';
import { retryTransient } from '../../lib/kube/transient.ts';
import { setupClusterSuite, type ClusterSuite, type OwnPlane } from '../cluster/suite.ts';
import { eventually } from '../cluster/eventually.ts';
import { installCrds, looseCrd } from '../support/router-harness.ts';
import { comparableObject, writeEverything } from '../support/metadata-writes.ts';

export interface ProtobufListOptions {
  suite: string;
  /** A control plane of the suite's own (the oldest supported version); the shared one when omitted. */
  plane?: () => Promise<OwnPlane & { stop(): Promise<void> }>;
}

export function protobufListScenarios(o: ProtobufListOptions): void {
  let plane: (OwnPlane & { stop(): Promise<void> }) | undefined;
  let suite: ClusterSuite;
  let client: KubeClient;
  const GROUP = 'protobuf-list.e2e.kubeloop.dev';
  const GADGET = { apiVersion: `${GROUP}/v1`, kind: 'Gadget' };
  const gadgetsPath = () => `/apis/${GROUP}/v1/namespaces/${suite.namespace}/gadgets`;

  beforeAll(async () => {
    plane = await o.plane?.();
    suite = await setupClusterSuite(o.suite, plane);
    client = await KubeClient.fromKubeConfig(suite.kubeConfig);
    await installCrds(client, [looseCrd(GROUP, 'Gadget', 'gadgets')]);
    // A cold build of the oldest API server (.ci/run builds it beforehand) takes half an hour on 2 cores.
  }, 45 * 60_000);
  afterAll(async () => {
    await client?.close();
    await suite?.cleanup();
    await plane?.stop();
  });

  /** Every page of a list of `path` at `resourceVersion` exactly, `limit` a page (of what `selectors` select), asked with `accept`, and the media types they came in. */
  async function listPages(path: string, resourceVersion: string, accept: string, limit: number, selectors: { labelSelector?: string; shardSelector?: string } = {}): Promise<{ contentTypes: string[]; pages: MetadataListPage[] }> {
    const contentTypes: string[] = [];
    const pages: MetadataListPage[] = [];
    let token: string | undefined;
    do {
      const query = { ...selectors, ...(token === undefined ? { resourceVersion, resourceVersionMatch: 'Exact', limit } : { limit, continue: token }) };
      const { bytes, contentType } = await client.requestBytes({ path, accept, query });
      contentTypes.push(contentType);
      const page = isProtobufMediaType(contentType) ? decodeMetadataList(bytes) : (JSON.parse(bytes.toString('utf8')) as MetadataListPage);
      pages.push(page);
      token = page.metadata.continue;
    } while (token !== undefined);
    return { contentTypes, pages };
  }

  /**
   * A page as the informer keeps it: its items' metadata without managedFields. A page with no item says
   * `"items": null` in JSON (Go's nil slice) and has none in protobuf: both are an empty page, as listAll reads
   * them. A sharded list has such pages: the server fills a page by `limit`, then keeps the share's items.
   */
  const comparablePage = (page: MetadataListPage) => ({ ...page, items: (page.items ?? []).map((item) => comparableObject(item)) });

  describe('a metadata-only list in protobuf', () => {
    it.each([
      ['ConfigMaps (built in)', 'v1', 'ConfigMap', () => `/api/v1/namespaces/${suite.namespace}/configmaps`],
      ['a custom resource', GADGET.apiVersion, 'Gadget', gadgetsPath],
    ])('%s: the server answers in protobuf, and each page, paged by limit/continue, reads as in JSON but for managedFields', async (_name, apiVersion, kind, pathOf) => {
      const path = pathOf();
      // A custom resource's storage answers 429 "(re)initializing" for a moment after its CRD is established.
      await retryTransient(() => client.request({ path }), { timeoutMs: 30_000 });
      await writeEverything(client, path, apiVersion, kind);
      for (const name of ['p1', 'p2', 'p3']) await client.request({ method: 'POST', path, body: { apiVersion, kind, metadata: { name, labels: { page: name } } } });
      const { metadata } = await client.request<{ metadata: { resourceVersion: string } }>({ path, query: { limit: 1 } });
      const protobuf = await listPages(path, metadata.resourceVersion, METADATA_LIST_ACCEPT, 2);
      const json = await listPages(path, metadata.resourceVersion, METADATA_LIST_JSON_ACCEPT, 2);
      expect(protobuf.contentTypes.every(isProtobufMediaType)).toBe(true);
      expect(json.contentTypes.every((type) => type.startsWith('application/json'))).toBe(true);
      // owner, child-*, held, p1..p3 (kube-root-ca.crt too for ConfigMaps): three pages or more, each with its token.
      expect(protobuf.pages.length).toBeGreaterThanOrEqual(3);
      expect(protobuf.pages[0]?.metadata).toMatchObject({ resourceVersion: metadata.resourceVersion, continue: expect.any(String), remainingItemCount: expect.any(Number) });
      expect(protobuf.pages.map(comparablePage)).toEqual(json.pages.map(comparablePage));
      expect(JSON.stringify(protobuf.pages.map(comparablePage))).toBe(JSON.stringify(json.pages.map(comparablePage)));
      expect(json.pages.some((page) => page.items.some((item) => item.metadata.managedFields))).toBe(true);
      expect(protobuf.pages.some((page) => page.items.some((item) => item.metadata.managedFields))).toBe(false);
    });

    it('a sharded list (shardSelector) gives the same share and shardInfo in protobuf as in JSON, nothing outside the share', async () => {
      const path = `/api/v1/namespaces/${suite.namespace}/configmaps`;
      for (let n = 0; n < 12; n++) await client.request({ method: 'POST', path, body: { metadata: { name: `shard-${n}`, labels: { set: 'shard' } } } });
      const { metadata } = await client.request<{ metadata: { resourceVersion: string } }>({ path, query: { limit: 1 } });
      // The lower half of the uid hash space.
      const selector = shardSelector('object.metadata.uid', Array.from({ length: 128 }, (_, slot) => slot))!;
      const protobuf = await listPages(path, metadata.resourceVersion, METADATA_LIST_ACCEPT, 3, { labelSelector: 'set=shard', shardSelector: selector });
      const json = await listPages(path, metadata.resourceVersion, METADATA_LIST_JSON_ACCEPT, 3, { labelSelector: 'set=shard', shardSelector: selector });
      expect(protobuf.contentTypes.every(isProtobufMediaType)).toBe(true);
      expect(protobuf.pages.map(comparablePage)).toEqual(json.pages.map(comparablePage));
      const items = protobuf.pages.flatMap((page) => page.items ?? []);
      // A server with ShardedListAndWatch filters (the share, or shardInfo echoed), one without sends all twelve.
      expect(items.length === 12 || items.every((item) => shardSlot(shardFieldValue(item, 'object.metadata.uid')) < 128)).toBe(true);
    });

    it('a refusal (403 Forbidden) reads the same as when JSON alone was asked for', async () => {
      const nobody = client.impersonating({ user: 'protobuf-list-nobody' }, { qps: 5, burst: 5 });
      const refusal = (accept: string) => nobody.requestBytes({ path: gadgetsPath(), accept }).then(() => undefined, (error: unknown) => error);
      const [protobuf, json] = [await refusal(METADATA_LIST_ACCEPT), await refusal(METADATA_LIST_JSON_ACCEPT)];
      expect(protobuf).toMatchObject({ name: 'KubeApiError', statusCode: 403, reason: 'Forbidden' });
      expect((protobuf as Error).message).toBe((json as Error).message);
    });

    it('a metadata-only informer whose watch the server expires (410) relists from protobuf, its cache as the server lists it', async () => {
      const path = gadgetsPath();
      await retryTransient(() => client.request({ path }), { timeoutMs: 30_000 });
      for (const name of ['r1', 'r2', 'r3']) await client.request({ method: 'POST', path, body: { ...GADGET, metadata: { name, labels: { set: 'relist' } } } });
      const lists: string[] = [];
      let watches = 0;
      // The first watch asks from resourceVersion 1: older than the custom resource's watch cache, so the server answers 410.
      const expiring = {
        serverKey: client.serverKey,
        requestBytes: async (request: KubeRequest) => {
          const answer = await client.requestBytes(request);
          lists.push(answer.contentType);
          return answer;
        },
        streamResponse: (request: KubeRequest) => client.streamResponse(watches++ === 0 ? { ...request, query: { ...request.query, resourceVersion: '1' } } : request),
      } as unknown as KubeClient;
      const resource = await eventually('Gadget discoverable', () => new ResourceDiscovery(client).resolve(GADGET.apiVersion, GADGET.kind));
      const informer = new Informer<KubernetesObject>({ client: expiring, resource, namespace: suite.namespace, labelSelector: 'set=relist', metadataOnly: true, watchList: false, pageSize: 2, backoff: { baseMs: 50, maxMs: 50, jitter: 0 } });
      const restarts: string[] = [];
      informer.on('restart', (reason) => restarts.push(reason));
      try {
        informer.start();
        await informer.waitForSync();
        await eventually('relisted after the 410', async () => restarts.includes('gone') && lists.length >= 4);
        // Two pages a list (limit 2), both lists in protobuf.
        expect(lists.every(isProtobufMediaType)).toBe(true);
        const server = await client.request<{ items: KubernetesObject[] }>({ path, query: { labelSelector: 'set=relist' } });
        const held = informer.store.list().map((o) => [o.apiVersion, o.kind, o.metadata?.name, o.metadata?.uid, o.metadata?.resourceVersion, o.metadata?.managedFields]);
        expect(held.sort()).toEqual(server.items.map((o) => [GADGET.apiVersion, GADGET.kind, o.metadata?.name, o.metadata?.uid, o.metadata?.resourceVersion, undefined]).sort());
      } finally {
        await informer.stop();
      }
    });
  });
}
