// README's migration from the cluster-scoped Loop and AdmissionHook to ClusterLoop and ClusterAdmissionHook:
// its two `kubectl get ... | sed` lines, run by bash on what `kubectl get -o yaml` prints for the old kinds,
// give objects of the new kinds with the same names and specs, that the router and the gateway accept, and
// nothing that would make `kubectl apply` refuse to create them (resourceVersion, uid).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseLoop } from '../../router/base/loop-spec.ts';
import { resolveHook } from '../../webhooks/base/hook-spec.ts';
import { extractSnippets } from './markdown-snippets.ts';

const exec = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'kubeloop-migration-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// What kubectl 1.35 prints for `kubectl get loops.kubeloop.dev -o yaml` on the previous main (managed fields hidden).
const OLD_LOOPS = `apiVersion: v1
items:
- apiVersion: kubeloop.dev/v1alpha1
  kind: Loop
  metadata:
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: |
        {"apiVersion":"kubeloop.dev/v1alpha1","kind":"Loop","metadata":{"annotations":{},"name":"podset"},"spec":{"for":{"apiVersion":"app.kubeloop.dev/v1alpha1","kind":"PodSet"}}}
    creationTimestamp: "2026-11-20T10:00:00Z"
    generation: 3
    labels:
      team: platform
    name: podset
    resourceVersion: "48213"
    uid: 0b7c1e54-7f6a-4a51-9d43-2f4f8f0c1a11
  spec:
    for:
      apiVersion: app.kubeloop.dev/v1alpha1
      kind: PodSet
    owns:
    - apiVersion: v1
      kind: Pod
    finalize: true
    function:
      timeoutSeconds: 5
      url: http://podset.kubeloop-system.svc:8080/reconcile
    serviceAccount:
      name: podset-loop
      namespace: kubeloop-system
  status:
    conditions:
    - lastTransitionTime: "2026-11-20T10:00:02Z"
      message: watching PodSet
      observedGeneration: 3
      reason: Running
      status: "True"
      type: Ready
    observedGeneration: 3
kind: List
metadata:
  resourceVersion: ""
`;

const OLD_HOOKS = `apiVersion: v1
items:
- apiVersion: kubeloop.dev/v1alpha1
  kind: AdmissionHook
  metadata:
    creationTimestamp: "2026-11-20T10:00:00Z"
    generation: 1
    name: require-team
    resourceVersion: "48300"
    uid: 5d1e2c3b-0a9f-4e8d-8c7b-6a5f4e3d2c1b
  spec:
    type: validating
    rules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [pods]
    failurePolicy: Fail
    function:
      service: { name: require-team, namespace: kubeloop-system, port: 8080, path: /admit }
    serviceAccount: { name: require-team, namespace: kubeloop-system }
kind: List
metadata:
  resourceVersion: ""
`;

/** README's migration line for `plural`, reading the recorded output instead of a cluster. */
function recipeLine(plural: string, recorded: string): string {
  const block = extractSnippets('README.md', readFileSync(new URL('../../README.md', import.meta.url), 'utf8'), 'sh').find((s) => s.marker.startsWith('migration'));
  if (!block) throw new Error('README.md has no ```sh block marked "snippet: migration"');
  const line = block.code.split('\n').find((l) => l.startsWith(`kubectl get ${plural}.kubeloop.dev -o yaml | sed `));
  if (!line) throw new Error(`the migration block has no line for ${plural}`);
  return line.replace(`kubectl get ${plural}.kubeloop.dev -o yaml`, `cat ${recorded}`);
}

type Item = { apiVersion: string; kind: string; metadata: Record<string, unknown> & { name: string }; spec: Record<string, unknown> };

async function migrate(plural: string, old: string, out: string): Promise<{ kind: string; items: Item[] }> {
  const recorded = join(work, `${plural}.yaml`);
  writeFileSync(recorded, old);
  await exec('bash', ['-c', `set -eo pipefail; ${recipeLine(plural, recorded)}`], { cwd: work });
  return parse(readFileSync(join(work, out), 'utf8')) as { kind: string; items: Item[] };
}

describe("README's migration recipe", () => {
  it('turns the old cluster-scoped Loops into ClusterLoops with the same name, labels and spec, creatable by kubectl apply', async () => {
    const list = await migrate('loops', OLD_LOOPS, 'clusterloops.yaml');
    const before = (parse(OLD_LOOPS) as { items: Item[] }).items[0];
    expect(list.kind).toBe('List');
    const [loop] = list.items;
    expect(loop).toMatchObject({ apiVersion: 'kubeloop.dev/v1alpha1', kind: 'ClusterLoop', metadata: { name: 'podset', labels: { team: 'platform' } } });
    expect(loop?.spec).toEqual(before?.spec);
    for (const field of ['resourceVersion', 'uid', 'creationTimestamp', 'generation']) expect(loop?.metadata).not.toHaveProperty(field);
    // The kinds the Loop names are untouched: only the object's own kind changed.
    expect(loop?.spec.for).toEqual({ apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet' });
    expect(parseLoop(loop as never)).toMatchObject({ name: 'podset', namespace: undefined, serviceAccount: { namespace: 'kubeloop-system', name: 'podset-loop' } });
  });

  it('turns the old cluster-scoped AdmissionHooks into ClusterAdmissionHooks the gateway accepts', async () => {
    const list = await migrate('admissionhooks', OLD_HOOKS, 'clusteradmissionhooks.yaml');
    const [hook] = list.items;
    expect(hook).toMatchObject({ kind: 'ClusterAdmissionHook', metadata: { name: 'require-team' } });
    expect(hook?.metadata).not.toHaveProperty('resourceVersion');
    expect(hook?.metadata).not.toHaveProperty('uid');
    const resolved = resolveHook(hook as never);
    expect(resolved.ok).toBe(true);
  });
});
