import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from './kube-api-error.ts';
import type { KubeClient, KubeRequest } from './kube-client.ts';
import { continueFromHead, listAll } from './list-all.ts';

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
