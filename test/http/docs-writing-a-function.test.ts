// docs/writing-a-function.md must not rot: its `expose` function is extracted from the page, loaded, and
// checked to do what the page says, and served over real HTTP by the function runtime.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionDefinition } from '../../lib/sdk/define-function.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { requestFor } from '../support/reconcile-request.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

let dir = '';
let expose: FunctionDefinition;

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', uid: 'u-1', resourceVersion: '7', annotations: { 'expose.example.com/port': '8080' } },
  spec: { selector: { matchLabels: { app: 'web' } } },
};

beforeAll(async () => {
  const page = await readFile(join(REPO, 'docs', 'writing-a-function.md'), 'utf8');
  const source = /```ts\n(\/\/ expose:[\s\S]*?)```/.exec(page)?.[1];
  if (!source) throw new Error('docs/writing-a-function.md no longer holds the expose function in a ```ts block');
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-doc-'));
  // The page imports the SDK from the package; point that at this checkout's source.
  const file = join(dir, 'index.ts');
  if (!source.includes("from 'kubeloop';")) throw new Error("the expose function no longer imports from 'kubeloop'");
  await writeFile(file, source.replace("from 'kubeloop';", `from '${join(REPO, 'lib', 'sdk', 'index.ts')}';`));
  expose = ((await import(pathToFileURL(file).href)) as { default: FunctionDefinition }).default;
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the expose function of docs/writing-a-function.md', () => {
  it('applies a Service on the annotated port, owned by the Deployment', () => {
    const [action] = expose.reconcile(requestFor(deployment)).actions;
    expect(action).toMatchObject({
      op: 'apply',
      object: { kind: 'Service', metadata: { name: 'web', ownerReferences: [{ kind: 'Deployment', uid: 'u-1', controller: true }] }, spec: { ports: [{ port: 8080 }] } },
    });
  });

  it('deletes its Service when the annotation is removed', () => {
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop', uid: 's-1' } };
    const request = requestFor({ ...deployment, metadata: { ...deployment.metadata, annotations: {} } }, { children: { 'Service.v1': [service] } });
    expect(expose.reconcile(request).actions).toEqual([expect.objectContaining({ op: 'delete', target: expect.objectContaining({ name: 'web' }) })]);
  });

  it('reports a bad port with a Warning event instead of acting', () => {
    const request = requestFor({ ...deployment, metadata: { ...deployment.metadata, annotations: { 'expose.example.com/port': 'http' } } });
    expect(expose.reconcile(request).actions).toEqual([expect.objectContaining({ op: 'event', type: 'Warning', reason: 'InvalidPort' })]);
  });

  describe('served by the function runtime', () => {
    let served: ServedFunction;
    beforeAll(async () => {
      served = await serveFunction(expose, { port: 0, host: '127.0.0.1', logLevel: 'silent' });
    });
    afterAll(async () => {
      await served?.close();
    });

    it('answers a ReconcileRequest over HTTP with a valid response', async () => {
      const reply = await fetch(`${served.url}/reconcile`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(requestFor(deployment)) });
      expect(reply.status).toBe(200);
      expect(((await reply.json()) as { actions: Array<{ op: string }> }).actions.map((a) => a.op)).toEqual(['apply']);
    });
  });
});
