import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import type { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import type { KubeClient, KubeRequest } from '../../lib/kube/kube-client.ts';
import { dryRunTarget } from './dry-run.ts';

const primary: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'shop', uid: 'uid-web', resourceVersion: '7' }, data: { a: '1' } };
const configMaps = { group: '', version: 'v1', apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };

/** A client that holds the primary and answers every write with the body it was sent: what the dry-run would send. */
function recordingContext() {
  const writes: KubeRequest[] = [];
  const client = {
    getIfExists: async ({ path }: { path: string }) => (path === '/api/v1/namespaces/shop/configmaps/web' ? primary : undefined),
    request: async (request: KubeRequest) => {
      writes.push(request);
      return request.body;
    },
  } as unknown as KubeClient;
  const discovery = { resolve: async () => configMaps } as unknown as ResourceDiscovery;
  return { ctx: { client, discovery, fieldManager: 'kubeloop/web', primary }, writes };
}

describe('dryRunTarget', () => {
  it('dry-runs an apply of the primary itself as a change of the primary, not as a child owned by itself', async () => {
    const { ctx, writes } = recordingContext();
    const outcome = await dryRunTarget(ctx, [{ op: 'apply', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web' }, data: { a: '2' } } }]);
    expect(outcome).toMatchObject({ kind: 'object', live: primary, after: { metadata: { name: 'web', namespace: 'shop' }, data: { a: '2' } } });
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatchObject({ method: 'PATCH', path: '/api/v1/namespaces/shop/configmaps/web', query: { dryRun: 'All', fieldManager: 'kubeloop/web', force: true } });
    expect((writes[0]?.body as KubeObject).metadata?.ownerReferences).toBeUndefined();
  });

  it('dry-runs an apply of another object as the router sends a child: owned by the primary', async () => {
    const { ctx, writes } = recordingContext();
    await dryRunTarget(ctx, [{ op: 'apply', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-config' }, data: { b: '1' } } }]);
    expect((writes[0]?.body as KubeObject).metadata?.ownerReferences).toMatchObject([{ name: 'web', uid: 'uid-web', controller: true }]);
  });

  it("dry-runs a patch of the primary with the router's tests: of what a metadata-only Loop's function saw, else of the version it was sent", async () => {
    const labelled: KubeObject = { ...primary, metadata: { ...primary.metadata, labels: { team: 'a&b' } } };
    const patch = [{ op: 'test' as const, path: '/metadata/resourceVersion', value: '7' }, { op: 'add' as const, path: '/metadata/labels/tier', value: 'web' }];
    const target = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'web' };
    const metadataOnly = recordingContext();
    await dryRunTarget({ ...metadataOnly.ctx, primary: labelled, metadataOnly: true }, [{ op: 'patch', target, patch }]);
    const sent = metadataOnly.writes[0]?.body as string;
    // Spelled as the API server spells strings: its test compares bytes.
    expect(sent).toContain('"a\\u0026b"');
    const ops = JSON.parse(sent) as { op: string; path: string; value?: unknown }[];
    expect(ops.filter((op) => op.op === 'test').map((op) => op.path)).toEqual(expect.arrayContaining(['/metadata/uid', '/metadata/labels']));
    expect(ops.some((op) => op.path === '/metadata/resourceVersion')).toBe(false);
    const full = recordingContext();
    await dryRunTarget(full.ctx, [{ op: 'patch', target, patch: patch.slice(1) }]);
    expect(JSON.parse(full.writes[0]?.body as string)[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '7' });
  });
});
