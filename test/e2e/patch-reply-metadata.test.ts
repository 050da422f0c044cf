// The router's JSON patches against the real API server, over node:http2 as the router sends them: the reply is
// PartialObjectMetadata in protobuf (managedFields never parsed), for a built-in kind as for a custom resource, read as
// the metadata the object's JSON holds; a refused patch is still told stale or invalid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiError, KubeClient } from '../../lib/kube/kube-client.ts';
import { metadataOf } from '../../lib/kube/kube-reply.ts';
import { METADATA_OBJECT_ACCEPT } from '../../lib/kube/metadata-media-types.ts';
import { isProtobufMediaType } from '../../lib/kube/protobuf-watch-stream.ts';
import { sendJsonPatch, StaleWriteError } from '../../router/apply/json-patch.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { installCrds, looseCrd } from '../support/router-harness.ts';

let suite: ClusterSuite;
let client: KubeClient;
const WIDGETS = looseCrd('patchreply.kubeloop.dev', 'Widget', 'widgets');

beforeAll(async () => {
  suite = await setupClusterSuite('patch-reply-metadata');
  client = await KubeClient.fromKubeConfig(suite.kubeConfig, { http2Writes: true });
  await installCrds(client, [WIDGETS]);
});
afterAll(async () => {
  await client?.close();
  await suite?.cleanup();
});

type Meta = { metadata: Record<string, unknown> & { resourceVersion?: string; managedFields?: unknown } };

/** The object's metadata as its JSON holds it, less managedFields (which a metadata reply skips unread). */
async function jsonMetadata(path: string): Promise<Record<string, unknown>> {
  const { metadata } = await client.request<Meta>({ path });
  const { managedFields, ...rest } = metadata;
  expect(managedFields).toBeDefined();
  return rest;
}

describe('a JSON patch’s reply, read as metadata', () => {
  it('comes in protobuf for a built-in kind and reads as the metadata the object’s JSON holds', async () => {
    const path = `/api/v1/namespaces/${suite.namespace}/configmaps/labelled`;
    await client.request({ method: 'POST', path: path.replace(/\/labelled$/, ''), body: { metadata: { name: 'labelled', labels: { a: '1' }, annotations: { note: 'x & <y>' } }, data: { big: 'x'.repeat(4000) } } });
    const raw = await client.requestBytes({ method: 'PATCH', path, contentType: 'application/json-patch+json', accept: METADATA_OBJECT_ACCEPT, body: [{ op: 'add', path: '/metadata/labels/b', value: '2' }] });
    expect(isProtobufMediaType(raw.contentType)).toBe(true);
    // The 4,000 bytes of data were never sent: only the metadata came back.
    expect(raw.bytes.length).toBeLessThan(2000);

    const patched = await sendJsonPatch(client, path, [{ op: 'add', path: '/metadata/labels/c', value: '3' }]);
    expect(patched.metadata).toEqual(await jsonMetadata(path));
    expect(patched.metadata?.labels).toEqual({ a: '1', b: '2', c: '3' });
  });

  it('reads the same way for a custom resource', async () => {
    const collection = `/apis/patchreply.kubeloop.dev/v1/namespaces/${suite.namespace}/widgets`;
    await client.request({ method: 'POST', path: collection, body: { apiVersion: 'patchreply.kubeloop.dev/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } } });
    const patched = await sendJsonPatch(client, `${collection}/w`, [{ op: 'add', path: '/metadata/labels', value: { d: '4' } }]);
    expect(patched.metadata).toEqual(await jsonMetadata(`${collection}/w`));
    expect(patched.metadata?.labels).toEqual({ d: '4' });
  });

  it('tells a stale write (its resourceVersion test failed) from an invalid patch, both refused in protobuf', async () => {
    const path = `/api/v1/namespaces/${suite.namespace}/configmaps/stale`;
    await client.request({ method: 'POST', path: path.replace(/\/stale$/, ''), body: { metadata: { name: 'stale' } } });
    const seen = metadataOf(await client.requestBytes({ path, accept: METADATA_OBJECT_ACCEPT })).metadata?.resourceVersion;
    await client.request({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: { metadata: { labels: { moved: 'on' } } } });
    const test = { op: 'test' as const, path: '/metadata/resourceVersion', value: seen };
    const stale = await sendJsonPatch(client, path, [test, { op: 'add', path: '/metadata/labels/x', value: 'y' }]).catch((error: unknown) => error);
    expect(stale).toBeInstanceOf(StaleWriteError);
    const invalid = await sendJsonPatch(client, path, [{ op: 'replace', path: '/metadata/nothing/here', value: 'y' }]).catch((error: unknown) => error);
    expect(isApiError(invalid, 422)).toBe(true);
    expect(invalid).not.toBeInstanceOf(StaleWriteError);
  });
});
