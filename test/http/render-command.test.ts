// `kubeloop render` against functions over real HTTP: actions and the objects after them without a recorded
// response, children from files, clear errors for bad YAML, bad objects and a failing function.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { run } from '../../cli/commands/render.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { captureCommand } from './capture-console.ts';
import { exampleFunction, MISBEHAVE_LABEL } from './example-function.ts';

const folder = mkdtempSync(join(tmpdir(), 'kubeloop-render-'));
let served: ServedFunction;

function write(name: string, text: string): string {
  const file = join(folder, name);
  writeFileSync(file, text);
  return file;
}

const render = (argv: string[]) => captureCommand(run, argv);

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: web-0
  namespace: shop
  uid: u-1
  resourceVersion: "42"
  labels: { app: web }
spec:
  containers: [{ name: web, image: nginx }]
`;

beforeAll(async () => {
  served = await serveFunction(exampleFunction, { port: 0, host: '127.0.0.1', logLevel: 'silent' });
});
afterAll(async () => {
  await served.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('kubeloop render', () => {
  it('prints the actions and the object after its patch, calling a running function (--to)', async () => {
    const { code, output } = await render([write('pod.yaml', POD), '--to', served.url]);
    expect(code).toBe(0);
    expect(output).toContain('# event Normal Labelled: labelled web-0');
    const docs = parseAllDocuments(output.slice(output.indexOf('apiVersion'))).map((d) => d.toJS() as Record<string, unknown>);
    expect(docs[0]).toMatchObject({ kind: 'ReconcileResponse', actions: [{ op: 'patch' }, { op: 'event' }] });
    expect(docs[1]).toMatchObject({ kind: 'Pod', metadata: { name: 'web-0', labels: { app: 'web', 'example.kubeloop.dev/seen': 'true' } } });
  });

  it('serves a built-in function in-process (--function) and gives it the children and Loop from files', async () => {
    const pod = write('annotated.yaml', POD.replace('labels: { app: web }', "annotations: { kubeloop.dev/add-pod-name-label: 'true' }"));
    const loop = write('loop.yaml', 'apiVersion: kubeloop.dev/v1alpha1\nkind: Loop\nmetadata: { name: pod-name-label }\nspec:\n  for: { apiVersion: v1, kind: Pod }\n  owns: [{ apiVersion: v1, kind: ConfigMap }]\n');
    const { code, output } = await render([pod, '--function', 'pod-name-label', '--loop', loop, '--output', 'json']);
    expect(code).toBe(0);
    const result = JSON.parse(output) as { objects: Array<{ metadata: { labels: Record<string, string> } }>; problems: string[] };
    expect(result.objects[0]?.metadata.labels['kubeloop.dev/pod-name']).toBe('web-0');
    expect(result.problems).toEqual([]);
  });

  it('names the file and document of bad YAML or of something that is not an object (exit 2)', async () => {
    const badYaml = await render([write('bad.yaml', 'metadata: [\n'), '--to', served.url]);
    expect(badYaml.code).toBe(2);
    expect(badYaml.output).toMatch(/bad\.yaml document 1: not valid YAML/);
    const noName = await render([write('noname.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {}\n'), '--to', served.url]);
    expect(noName.output).toMatch(/noname\.yaml document 1: a Kubernetes object needs metadata\.name/);
    const two = await render([write('two.yaml', `${POD}---\n${POD}`), '--to', served.url]);
    expect(two.output).toMatch(/want exactly one object \(the primary\), found 2; pass the others with --children/);
    expect((await render([join(folder, 'missing.yaml'), '--to', served.url])).output).toMatch(/missing\.yaml: cannot read/);
    expect((await render([join(folder, 'pod.yaml')])).output).toContain('give either --function <module> or --to <url>');
  });

  it('exits 1 with the function\'s error when it fails', async () => {
    const failing = write('throws.yaml', POD.replace('labels: { app: web }', `labels: { ${MISBEHAVE_LABEL}: throw }`));
    const { code, output } = await render([failing, '--to', served.url]);
    expect(code).toBe(1);
    expect(output).toMatch(/the function failed: HTTP 500: .*cannot reconcile this object/);
  });
});
