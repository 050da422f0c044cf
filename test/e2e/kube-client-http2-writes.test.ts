// KubeClient's `http2Writes` against the real API server: writes go over node:http2 and behave as over undici
// (answers, Status errors with their reason, impersonation), while reads and watches stay on undici.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiError, KubeApiError, KubeClient } from '../../lib/kube/kube-client.ts';
import { METADATA_JSON_ACCEPT } from '../../lib/kube/metadata-media-types.ts';
import { readWatchEvents } from '../../lib/kube/watch-stream.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';

let suite: ClusterSuite;
let client: KubeClient;
// Streams node:http2 opened. Reads and watches go over undici on HTTP/1.1 here (http2: false), which opens
// none, so every one counted is a write of http2Writes.
let streams = 0;
const countStream = () => void streams++;

beforeAll(async () => {
  suite = await setupClusterSuite('kube-client-http2-writes');
  client = await KubeClient.fromKubeConfig(suite.kubeConfig, { http2: false, http2Writes: true });
  subscribe('http2.client.stream.created', countStream);
});
afterAll(async () => {
  unsubscribe('http2.client.stream.created', countStream);
  await client?.close();
  await suite?.cleanup();
});

describe('KubeClient with http2Writes', () => {
  it('creates, patches and deletes over node:http2 while a watch on undici sees each write', async () => {
    const path = `/api/v1/namespaces/${suite.namespace}/configmaps`;
    const listed = await client.request<{ metadata: { resourceVersion: string } }>({ path });
    const abort = new AbortController();
    const body = await client.stream({ path, query: { watch: true, resourceVersion: listed.metadata.resourceVersion }, signal: abort.signal });
    const seen: string[] = [];
    const watching = (async () => {
      for await (const event of readWatchEvents<{ metadata?: { name?: string }; data?: Record<string, string> }>(body)) {
        if (event.object.metadata?.name !== 'h2') continue;
        seen.push(`${event.type} ${event.object.data?.step ?? ''}`);
        if (event.type === 'DELETED') return;
      }
    })();
    const before = streams;
    const created = await client.request<{ metadata: { uid: string } }>({ method: 'POST', path, body: { metadata: { name: 'h2' }, data: { step: 'created' } } });
    expect(created.metadata.uid).toBeTruthy();
    const patched = await client.request<{ data: Record<string, string> }>({ method: 'PATCH', path: `${path}/h2`, contentType: 'application/merge-patch+json', body: { data: { step: 'patched' } } });
    expect(patched.data.step).toBe('patched');
    await client.request({ method: 'DELETE', path: `${path}/h2` });
    await watching;
    abort.abort();
    expect(seen).toEqual(['ADDED created', 'MODIFIED patched', 'DELETED patched']);
    // The three writes went over node:http2; the list and the watch did not.
    expect(streams - before).toBe(3);
  });

  it("answers the API server's refusals as KubeApiError with their reason, and many writes in flight share the session", async () => {
    const path = `/api/v1/namespaces/${suite.namespace}/configmaps`;
    await client.request({ method: 'POST', path, body: { metadata: { name: 'twice' } } });
    const again = await client.request({ method: 'POST', path, body: { metadata: { name: 'twice' } } }).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(KubeApiError);
    expect(isApiError(again, 409) && again.reason).toBe('AlreadyExists');
    const names = Array.from({ length: 40 }, (_, i) => `many-${i}`);
    await Promise.all(names.map((name) => client.request({ method: 'POST', path, body: { metadata: { name } } })));
    const list = await client.request<{ items: unknown[] }>({ path, query: { labelSelector: '' } });
    expect(list.items.length).toBeGreaterThanOrEqual(41);
  });

  it("sends a DELETE's options: a uid precondition that does not match is refused and the object stays, the right one deletes it", async () => {
    const path = `/api/v1/namespaces/${suite.namespace}/configmaps`;
    const created = await client.request<{ metadata: { uid: string } }>({ method: 'POST', path, body: { metadata: { name: 'precondition' } } });
    const before = streams;
    const wrong = await client.request({ method: 'DELETE', path: `${path}/precondition`, body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-its-uid' } } }).catch((error: unknown) => error);
    expect(isApiError(wrong, 409) && wrong.reason).toBe('Conflict');
    expect(await client.getIfExists({ path: `${path}/precondition` })).toBeDefined();
    await client.request({ method: 'DELETE', path: `${path}/precondition`, body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', preconditions: { uid: created.metadata.uid } } });
    expect(await client.getIfExists({ path: `${path}/precondition` })).toBeUndefined();
    expect(streams - before).toBe(2);
  });

  it('answers a PATCH as PartialObjectMetadata when asked (the router reads only the resourceVersion it wrote)', async () => {
    const path = `/api/v1/namespaces/${suite.namespace}/configmaps`;
    await client.request({ method: 'POST', path, body: { metadata: { name: 'metadata-reply' }, data: { big: 'x'.repeat(1000) } } });
    const reply = await client.request<{ kind: string; metadata: { resourceVersion?: string }; data?: unknown }>({
      method: 'PATCH',
      path: `${path}/metadata-reply`,
      contentType: 'application/json-patch+json',
      accept: METADATA_JSON_ACCEPT,
      body: [{ op: 'add', path: '/metadata/labels', value: { patched: 'yes' } }],
    });
    expect(reply.kind).toBe('PartialObjectMetadata');
    expect(reply.metadata.resourceVersion).toBeTruthy();
    expect(reply.data).toBeUndefined();
  });

  it('writes as the impersonated user over the shared session: refused where that user may not write', async () => {
    const nobody = client.impersonating({ user: 'kube-client-http2-nobody' }, { qps: 10, burst: 10 });
    const refused = await nobody.request({ method: 'POST', path: `/api/v1/namespaces/${suite.namespace}/configmaps`, body: { metadata: { name: 'x' } } }).catch((error: unknown) => error);
    expect(isApiError(refused, 403)).toBe(true);
  });
});
