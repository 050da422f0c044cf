import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeClient } from './kube-client.ts';
import { listAll } from './list-all.ts';

const resource = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
const pod = (name: string): KubernetesObject => ({ metadata: { name, namespace: 'a', managedFields: [{ manager: 'kubelet' }] } });

/** Serves two pages and records, per request, what the transform had seen by then. */
function pagedClient(seen: string[]): { client: KubeClient; requests: string[][] } {
  const pages = [{ items: [pod('p1'), pod('p2')], metadata: { continue: 'next', resourceVersion: '5' } }, { items: [pod('p3')], metadata: { resourceVersion: '5' } }];
  const requests: string[][] = [];
  const client = {
    request: async () => {
      requests.push([...seen]);
      return pages[requests.length - 1];
    },
  } as unknown as KubeClient;
  return { client, requests };
}

describe('listAll', () => {
  it('transforms each page as it arrives, before asking for the next, so no list holds every item whole', async () => {
    const seen: string[] = [];
    const { client, requests } = pagedClient(seen);
    const { items, resourceVersion } = await listAll<KubernetesObject>(client, { resource, pageSize: 2 }, (item) => {
      seen.push(`${item.kind} ${item.metadata?.name}`);
      return { ...item, metadata: { ...item.metadata, managedFields: undefined } };
    });
    expect(requests).toEqual([[], ['Pod p1', 'Pod p2']]);
    expect(items.map((i) => i.metadata?.name)).toEqual(['p1', 'p2', 'p3']);
    expect(items.every((i) => i.metadata?.managedFields === undefined && i.apiVersion === 'v1')).toBe(true);
    expect(resourceVersion).toBe('5');
  });
});
