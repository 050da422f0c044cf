import { readFileSync } from 'node:fs';
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from './kube-api-error.ts';
import type { KubeClient, KubeRequest } from './kube-client.ts';
import { continueFromHead, listAll, nextPageToken } from './list-all.ts';
import { METADATA_LIST_ACCEPT } from './metadata-media-types.ts';

/** A metadata-only ConfigMap list of two pages, in protobuf and in JSON, as a real API server answered it (protobuf-list.test.ts). */
const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/protobuf-list/${name}`, import.meta.url));
const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const configMaps = { group: '', version: 'v1', apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };

/** Serves the recorded pages in `encoding` to metadata-only requests (requestBytes), recording each; `expireOnce`: the first continue token answers 410. */
function recordedPagesClient(encoding: 'pb' | 'json', expireOnce = false): { client: KubeClient; asked: Array<{ accept: unknown; token: unknown; limit: unknown }> } {
  const asked: Array<{ accept: unknown; token: unknown; limit: unknown }> = [];
  const first = JSON.parse(fixture('configmaps-page1.json').toString('utf8')) as { metadata: { continue: string } };
  const client = {
    requestBytes: async (request: KubeRequest) => {
      const token = request.query?.continue;
      asked.push({ accept: request.accept, token, limit: request.query?.limit });
      if (expireOnce && token !== undefined && asked.length === 2) throw new KubeApiError(410, 'Expired', 'continue token expired', { method: 'GET', path: request.path });
      if (token !== undefined && token !== first.metadata.continue) throw new Error(`unknown token ${String(token)}`);
      return { bytes: fixture(`configmaps-page${token === undefined ? 1 : 2}.${encoding}`), contentType: encoding === 'pb' ? PROTOBUF : 'application/json' };
    },
  } as unknown as KubeClient;
  return { client, asked };
}

const resource = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
const pod = (name: string): KubernetesObject => ({ metadata: { name, namespace: 'a', managedFields: [{ manager: 'kubelet' }] } });
/** A page as the API server writes it: kind, apiVersion and metadata before items. */
const page = (names: string[], token?: string) => JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '5', ...(token ? { continue: token } : {}) }, items: names.map(pod) });

/** Serves three pages and records, per request, its continue token and what the transform had seen by then. */
function pagedClient(seen: string[]): { client: KubeClient; requests: Array<{ token: unknown; seen: string[] }> } {
  const pages: Record<string, string> = { '': page(['p1', 'p2'], 'second'), second: page(['p3', 'p4'], 'third'), third: page(['p5']) };
  const requests: Array<{ token: unknown; seen: string[] }> = [];
  const client = {
    requestText: async (request: KubeRequest) => {
      const token = request.query?.continue;
      requests.push({ token, seen: [...seen] });
      return pages[String(token ?? '')];
    },
  } as unknown as KubeClient;
  return { client, requests };
}

describe('listAll', () => {
  it('asks for the next page before parsing this one, and transforms each page before asking one further (at most one page ahead)', async () => {
    const seen: string[] = [];
    const { client, requests } = pagedClient(seen);
    const { items, resourceVersion } = await listAll<KubernetesObject>(client, { resource, pageSize: 2 }, (item) => {
      seen.push(`${item.kind} ${item.metadata?.name}`);
      return { ...item, metadata: { ...item.metadata, managedFields: undefined } };
    });
    expect(requests).toEqual([
      { token: undefined, seen: [] },
      { token: 'second', seen: [] },
      { token: 'third', seen: ['Pod p1', 'Pod p2'] },
    ]);
    expect(items.map((i) => i.metadata?.name)).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
    expect(items.every((i) => i.metadata?.managedFields === undefined && i.apiVersion === 'v1')).toBe(true);
    expect(resourceVersion).toBe('5');
  });

  it('starts over with one unpaged list when a page read ahead answers 410 (its continue token expired)', async () => {
    const limits: unknown[] = [];
    const client = {
      requestText: async (request: KubeRequest) => {
        limits.push(request.query?.limit);
        if (request.query?.continue === 'second') throw new KubeApiError(410, 'Expired', 'continue token expired', { method: 'GET', path: request.path });
        return request.query?.limit === undefined ? page(['p1', 'p2', 'p3']) : page(['p1'], 'second');
      },
    } as unknown as KubeClient;
    const { items } = await listAll<KubernetesObject>(client, { resource, pageSize: 1 });
    expect(items.map((i) => i.metadata?.name)).toEqual(['p1', 'p2', 'p3']);
    expect(limits).toEqual([1, 1, undefined]);
  });
});

describe('listAll, metadata only', () => {
  it('asks for protobuf first, and reads a list answered in protobuf as the same list answered in JSON, managedFields aside', async () => {
    const protobuf = recordedPagesClient('pb');
    const json = recordedPagesClient('json');
    const fromProtobuf = await listAll<KubernetesObject>(protobuf.client, { resource: configMaps, metadataOnly: true, pageSize: 4 });
    const fromJson = await listAll<KubernetesObject>(json.client, { resource: configMaps, metadataOnly: true, pageSize: 4 }, (item) => {
      delete item.metadata?.managedFields;
      return item;
    });
    expect(protobuf.asked.map((a) => a.accept)).toEqual([METADATA_LIST_ACCEPT, METADATA_LIST_ACCEPT]);
    expect(protobuf.asked.map((a) => a.token)).toEqual(json.asked.map((a) => a.token));
    expect(fromProtobuf.items).toHaveLength(6);
    expect(fromProtobuf).toEqual(fromJson);
    expect(JSON.stringify(fromProtobuf)).toBe(JSON.stringify(fromJson));
    expect(fromProtobuf.items.every((item) => item.apiVersion === 'v1' && item.kind === 'ConfigMap' && item.metadata?.managedFields === undefined)).toBe(true);
  });

  it('starts over with one unpaged list when a protobuf page read ahead answers 410, the first page\'s items read once', async () => {
    const { client, asked } = recordedPagesClient('pb', true);
    const { items } = await listAll<KubernetesObject>(client, { resource: configMaps, metadataOnly: true, pageSize: 4 });
    // The recorded server pages the unpaged list all the same: its two pages, after the expired attempt.
    expect(asked.map((a) => [a.token === undefined ? 'first' : 'next', a.limit])).toEqual([['first', 4], ['next', 4], ['first', undefined], ['next', undefined]]);
    expect(items.map((item) => item.metadata?.name)).toEqual(['child-4hrtp', 'held', 'kube-root-ca.crt', 'owner', 'p1', 'p2']);
  });

  it('fails, naming the list, on a protobuf page cut short (no item of it kept)', async () => {
    const whole = fixture('configmaps-page2.pb');
    const client = { requestBytes: async () => ({ bytes: whole.subarray(0, whole.length - 40), contentType: PROTOBUF }) } as unknown as KubeClient;
    await expect(listAll(client, { resource: configMaps, metadataOnly: true })).rejects.toThrow(/^protobuf list: \d+ bytes that are not a whole list/);
  });
});

describe('nextPageToken', () => {
  it('reads the next page\'s token from a protobuf page as from its JSON, and none from the last page', () => {
    const first = JSON.parse(fixture('configmaps-page1.json').toString('utf8')) as { metadata: { continue: string } };
    expect(nextPageToken(fixture('configmaps-page1.pb'))).toBe(first.metadata.continue);
    expect(nextPageToken(fixture('configmaps-page1.json').toString('utf8'))).toBe(first.metadata.continue);
    expect(nextPageToken(fixture('configmaps-page2.pb'))).toBeUndefined();
  });
});

describe('continueFromHead', () => {
  it('reads the token from the head of a page the API server wrote, full objects or metadata only', () => {
    expect(continueFromHead(page(['p1'], 'eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ'))).toBe('eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ');
    const meta = '{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7","continue":"abc","remainingItemCount":3},"items":[{"metadata":{"name":"x"}}]}';
    expect(continueFromHead(meta)).toBe('abc');
  });

  it('says nothing on the last page, on a body in another order or shape, or on one that is not JSON', () => {
    expect(continueFromHead(page(['p1']))).toBeUndefined();
    expect(continueFromHead('{"items":[{"metadata":{"continue":"no"}}],"metadata":{"continue":"late"}}')).toBeUndefined();
    expect(continueFromHead('{"metadata": {"continue": "spaced"},\n  "items": []}')).toBeUndefined();
    expect(continueFromHead('{"metadata":{"continue":7},"items":[]}')).toBeUndefined();
    expect(continueFromHead('not json,"items":[]')).toBeUndefined();
    expect(continueFromHead('')).toBeUndefined();
  });
});
