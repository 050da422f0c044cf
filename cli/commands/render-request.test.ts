// The request `kubeloop render` builds from a Loop file of either kind: a namespaced Loop's carries
// request.loopNamespace (the file's, or the primary's, where the Loop would be), a ClusterLoop's none.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateReconcileRequest } from '../../lib/contract/validate.ts';
import { buildRenderRequest, readLoop } from './render.ts';

const dir = mkdtempSync(join(tmpdir(), 'kubeloop-render-request-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function loopFile(kind: string, namespace?: string): string {
  const file = join(dir, `${kind}-${namespace ?? 'none'}.yaml`);
  writeFileSync(file, `apiVersion: kubeloop.dev/v1alpha1\nkind: ${kind}\nmetadata: { name: web${namespace ? `, namespace: ${namespace}` : ''} }\nspec:\n  for: { apiVersion: v1, kind: ConfigMap }\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: { name: web-loop }\n`);
  return file;
}

const primary = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'team-a', uid: 'u', resourceVersion: '1' } };

describe('kubeloop render --loop', () => {
  it("sends a namespaced Loop's namespace as request.loopNamespace: the file's, else the primary's", () => {
    for (const [file, want] of [[loopFile('Loop'), 'team-a'], [loopFile('Loop', 'team-b'), 'team-b']] as const) {
      const request = buildRenderRequest(primary, [], { loop: readLoop(file), trigger: 'ADDED', now: '2026-11-26T10:00:00Z' });
      expect(request).toMatchObject({ loop: 'web', loopNamespace: want });
      expect(validateReconcileRequest(request).ok).toBe(true);
    }
  });

  it('sends none for a ClusterLoop', () => {
    const request = buildRenderRequest(primary, [], { loop: readLoop(loopFile('ClusterLoop')), trigger: 'ADDED', now: '2026-11-26T10:00:00Z' });
    expect(request.loop).toBe('web');
    expect(request).not.toHaveProperty('loopNamespace');
  });
});
