// `kubeloop render` against functions over real HTTP: actions and the objects after them without a recorded
// response, children from files, clear errors for bad YAML, bad objects and a failing function.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
    const loop = write('loop.yaml', 'apiVersion: kubeloop.dev/v1alpha1\nkind: ClusterLoop\nmetadata: { name: pod-name-label }\nspec:\n  for: { apiVersion: v1, kind: Pod }\n  owns: [{ apiVersion: v1, kind: ConfigMap }]\n');
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

  describe('an admission function', () => {
    const REPO_SDK = join(fileURLToPath(new URL('../../', import.meta.url)), 'lib', 'sdk', 'index.ts');
    // Stamps a label and says in warnings what it was sent, so the flags can be seen arriving.
    const stamp = () =>
      write(
        'stamp.ts',
        `import { allow, defineAdmission, mutate } from ${JSON.stringify(REPO_SDK)};
export default defineAdmission({ name: 'stamp', type: 'mutating', admit: (request) => {
  const warnings = [\`\${request.operation} dryRun=\${request.dryRun} old=\${request.oldObject?.metadata?.labels?.app ?? 'none'}\`];
  if (!request.object) return allow({ warnings });
  return mutate(request, (pod) => { pod.metadata = { ...pod.metadata, labels: { ...pod.metadata?.labels, stamped: 'yes' } }; }, { warnings });
} });
`,
      );

    it('prints the decision of a validating function for a CREATE, exit 0 for a denial', async () => {
      const { code, output } = await render([join(folder, 'pod.yaml'), '--function', 'require-label']);
      expect(code).toBe(0);
      expect(output).toMatch(/^# CREATE of Pod shop\/web-0: denied: 422 Invalid: Pod "web-0" .*needs a "team" label/m);
    });

    it('prints the object after a mutating function\'s patch, for an UPDATE with --old and --dry-run', async () => {
      const old = write('old.yaml', POD.replace('labels: { app: web }', 'labels: { app: previous }'));
      const { code, output } = await render([join(folder, 'pod.yaml'), '--function', stamp(), '--old', old, '--dry-run']);
      expect(code).toBe(0);
      expect(output).toContain('# UPDATE (dry run) of Pod shop/web-0: allowed with a patch of 1 operation(s)');
      expect(output).toContain('# warning: UPDATE dryRun=true old=previous');
      const docs = parseAllDocuments(output.slice(output.indexOf('apiVersion'))).map((d) => d.toJS() as Record<string, unknown>);
      expect(docs[0]).toMatchObject({ kind: 'AdmissionResponse', allowed: true, patch: [{ op: 'add', path: '/metadata/labels/stamped', value: 'yes' }] });
      expect(docs[1]).toMatchObject({ kind: 'Pod', metadata: { name: 'web-0', labels: { app: 'web', stamped: 'yes' } } });
    });

    it('sends a DELETE with the object as the stored one and no new object', async () => {
      const { code, output } = await render([join(folder, 'pod.yaml'), '--function', stamp(), '--operation', 'DELETE', '--output', 'json']);
      expect(code).toBe(0);
      const result = JSON.parse(output) as { response: { warnings: string[] }; decision: string; object?: unknown };
      expect(result).toMatchObject({ decision: 'allowed', response: { warnings: ['DELETE dryRun=false old=web'] } });
      expect(result.object).toBeUndefined();
    });

    it('refuses admission flags for a reconcile function and an unknown operation (exit 2)', async () => {
      const reconcile = await render([join(folder, 'pod.yaml'), '--function', 'pod-name-label', '--operation', 'CREATE']);
      expect(reconcile.code).toBe(2);
      expect(reconcile.output).toContain('pod-name-label is a reconcile function; --operation, --old and --dry-run are for admission functions');
      const connect = await render([join(folder, 'pod.yaml'), '--function', stamp(), '--operation', 'CONNECT']);
      expect(connect.code).toBe(2);
      expect(connect.output).toContain('--operation: "CONNECT" is not one of CREATE, UPDATE, DELETE');
    });
  });

  it('exits 1 with the function\'s error when it fails', async () => {
    const failing = write('throws.yaml', POD.replace('labels: { app: web }', `labels: { ${MISBEHAVE_LABEL}: throw }`));
    const { code, output } = await render([failing, '--to', served.url]);
    expect(code).toBe(1);
    expect(output).toMatch(/the function failed: HTTP 500: .*cannot reconcile this object/);
  });
});
