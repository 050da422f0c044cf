// `kubeloop render --related`: related objects from files sorted into the Loop's spec.related entries as the
// router sorts them, named entries (NAME=FILE), and the requires rounds served from the same files.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/commands/render.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { defineFunction, relatedOf, requires, respond, event, type ReconcileRequest } from '../../lib/sdk/index.ts';
import { captureCommand } from './capture-console.ts';

const folder = mkdtempSync(join(tmpdir(), 'kubeloop-render-related-'));
const RELOADER = fileURLToPath(new URL('../../functions/config-reloader/index.ts', import.meta.url));
const write = (name: string, text: string) => {
  const file = join(folder, name);
  writeFileSync(file, text);
  return file;
};
const render = (argv: string[]) => captureCommand(run, argv);

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: shop, resourceVersion: "3", annotations: { kubeloop.dev/config-map: web-config } }
spec: { template: { metadata: { labels: { app: web } } } }
`;
const LOOP = `apiVersion: kubeloop.dev/v1alpha1
kind: ClusterLoop
metadata: { name: config-reloader }
spec:
  for: { apiVersion: apps/v1, kind: Deployment }
  related:
    - { name: config, apiVersion: v1, kind: ConfigMap, nameFrom: { annotation: kubeloop.dev/config-map } }
`;
const CONFIG_MAPS = `apiVersion: v1
kind: ConfigMap
metadata: { name: web-config, namespace: shop }
data: { level: info }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: other, namespace: shop }
data: { level: debug }
`;

const seen: ReconcileRequest[] = [];
let asking: ServedFunction;
beforeAll(async () => {
  asking = await serveFunction(
    defineFunction({
      name: 'asks-for-a-secret',
      reconcile: (request) => {
        seen.push(request);
        const found = relatedOf(request, 'db').length;
        return respond([event('Normal', 'Found', `${found} secret(s)`)], { requires: [requires('db', { apiVersion: 'v1', kind: 'Secret' }, { names: 'db' })] });
      },
    }),
    { port: 0, host: '127.0.0.1', logLevel: 'silent' },
  );
});
afterAll(async () => {
  await asking.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('kubeloop render --related', () => {
  it('sends the ConfigMap the Deployment names (not the other) under the entry name, and prints the rolled template', async () => {
    const { code, output } = await render([write('d.yaml', DEPLOYMENT), '--function', RELOADER, '--loop', write('loop.yaml', LOOP), '--related', write('cms.yaml', CONFIG_MAPS), '--output', 'json']);
    expect(code).toBe(0);
    const result = JSON.parse(output) as { objects: Array<{ spec: { template: { metadata: { annotations?: Record<string, string> } } } }> };
    expect(result.objects[0]?.spec.template.metadata.annotations?.['kubeloop.dev/config-hash']).toMatch(/^[0-9a-f]{32}$/);
  });

  it('refuses --related FILE without a Loop declaring related entries', async () => {
    const { code, output: errors } = await render([write('d2.yaml', DEPLOYMENT), '--function', RELOADER, '--related', write('cms2.yaml', CONFIG_MAPS)]);
    expect(code).toBe(2);
    expect(errors).toContain('--related FILE needs --loop with spec.related');
  });

  it('serves what the function requires from the --related files on a second call', async () => {
    const secret = write('secret.yaml', 'apiVersion: v1\nkind: Secret\nmetadata: { name: db, namespace: shop }\ndata: { value: eA== }\n');
    const { code, output } = await render([write('d3.yaml', DEPLOYMENT), '--to', asking.url, '--related', `unused=${secret}`]);
    expect(code).toBe(0);
    expect(output).toContain('# event Normal Found: 1 secret(s)');
    expect(seen.at(-2)?.related?.db).toBeUndefined();
    expect(seen.at(-1)?.related?.db?.[0]?.metadata?.name).toBe('db');
  });
});
