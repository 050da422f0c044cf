// `kubeloop dev --function <module> --loop <loop.yaml> --no-seeds` with a project made by `kubeloop init --crd
// example.com/v1alpha1/Widget`: dev installs the project's CRD (structural, accepted by the API server), the
// sample Widget applies as written, the user's function reconciles Widgets on the embedded cluster through the
// Loop's RBAC (the CRD's plural), an edit reloads it without restarting the cluster or the router (the new
// version answers, the old process drained and exited 0), and Ctrl+C stops it all.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { run as init } from '../../cli/commands/init.ts';
import { eventually } from '../cluster/eventually.ts';
import { startDev, stopDev, type DevProcess } from './dev-process.ts';
import { REPO_ROOT } from './production-bundle.ts';

const execute = promisify(execFile);
const kubectl = inject('clusterBinaries').kubectl;
const LABEL = 'dev-fn.example.com/reconciled';

let dev: DevProcess | undefined;
let output = '';
let workDir = '';
let project = '';
let kubeconfig = '';

async function kube(args: string[]): Promise<string> {
  const { stdout } = await execute(kubectl, ['--kubeconfig', kubeconfig, ...args]);
  return stdout;
}

async function labelOf(name: string): Promise<string> {
  return (await kube(['get', 'widget', name, '-n', 'default', '-o', `jsonpath={.metadata.labels.${LABEL.replace(/\./g, '\\.')}}`])).trim();
}

/** Applies init's sample Widget under another name. */
async function createWidget(name: string): Promise<void> {
  const sample = parse(await readFile(join(project, 'widget.yaml'), 'utf8')) as { metadata: Record<string, unknown> };
  const file = join(workDir, `${name}.yaml`);
  await writeFile(file, stringify({ ...sample, metadata: { name, namespace: 'default' } }));
  await kube(['apply', '-f', file]);
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'kubeloop-dev-function-'));
  project = join(workDir, 'dev-fn');
  const log = console.log;
  console.log = () => {};
  try {
    if ((await init([project, '--crd', 'example.com/v1alpha1/Widget'])) !== 0) throw new Error('kubeloop init failed');
  } finally {
    console.log = log;
  }
  // As if `npm install` had run: the project's import of the package points at this checkout.
  const source = await readFile(join(project, 'src', 'index.ts'), 'utf8');
  await writeFile(join(project, 'src', 'index.ts'), source.replace("from 'kubeloop'", `from ${JSON.stringify(join(REPO_ROOT, 'lib', 'sdk', 'index.ts'))}`));
  dev = await startDev(['--function', 'src/index.ts', '--loop', 'loop.yaml', '--no-seeds', '--no-webhook', '--dir', join(workDir, 'state'), '--status-interval-seconds', '1'], {
    cwd: project,
    env: { ...process.env, KUBELOOP_FROM_SOURCE: '1' },
    onOutput: (text) => (output += text),
  });
  kubeconfig = dev.kubeconfig;
}, 300_000);

afterAll(async () => {
  await stopDev(dev);
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('kubeloop dev --function', () => {
  it('runs only the user function beside the router, its Loop pointed at the local process', () => {
    // The namespaced Loop init writes, put into dev's --loop-namespace (default) and known by its identity.
    expect(output).toMatch(/Loops \(function URLs on 127\.0\.0\.1\): default\/dev-fn/);
    expect(output).toMatch(/function-dev-1 +http:\/\/127\.0\.0\.1:\d+/);
    expect(output).not.toContain('function-podset');
  });

  it("installs the project's CRD, structural and Established, and the sample applies as init wrote it", async () => {
    expect(output).toContain('installed widgets.example.com');
    const conditions = JSON.parse(await kube(['get', 'crd', 'widgets.example.com', '-o', 'jsonpath={.status.conditions}'])) as Array<{ type: string; status: string }>;
    expect(conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Established', status: 'True' })]));
    expect(conditions.filter((c) => c.type === 'NonStructuralSchema')).toEqual([]);
    await kube(['apply', '-f', join(project, 'widget.yaml')]);
    // The schema's default and the spec are kept: the API server pruned nothing it declares.
    expect(await kube(['get', 'widget', 'example', '-n', 'default', '-o', 'jsonpath={.spec.replicas}/{.spec.message}'])).toBe('1/hello');
  });

  it('reconciles a Widget through the user function, with the RBAC loop.yaml gives on its plural', async () => {
    await createWidget('first');
    await eventually('Widget first labelled by the function', async () => (await labelOf('first')) === 'true');
  });

  it('reloads the function on save: the new version answers, the cluster and router keep running, the old process drains', async () => {
    const routerLine = /router +http:\/\/127\.0\.0\.1:\d+ +pid (\d+)/.exec(output);
    const source = await readFile(join(project, 'src', 'index.ts'), 'utf8');
    await writeFile(join(project, 'src', 'index.ts'), source.replace("[RECONCILED_LABEL]: 'true'", "[RECONCILED_LABEL]: 'v2'").replace("=== 'true') return", "=== 'v2') return"));
    await eventually('kubeloop dev to report the reload', async () => /reloaded .*index\.ts: http:\/\/127\.0\.0\.1:\d+/.test(output), 60_000);
    await createWidget('second');
    await eventually('Widget second labelled by the new version', async () => (await labelOf('second')) === 'v2');
    // The same router process and API server served both versions.
    expect(output).toMatch(new RegExp(`router +http://127\\.0\\.0\\.1:\\d+ +pid ${routerLine?.[1] ?? 'x'}`));
    const oldLog = await readFile(join(workDir, 'state', 'logs', 'function-dev-1.log'), 'utf8');
    expect(oldLog).toContain('shutdown complete');
    expect(dev?.child.exitCode).toBeNull();
  });

  it('keeps serving the previous version when the edit does not load, and stops cleanly on Ctrl+C', async () => {
    await writeFile(join(project, 'src', 'index.ts'), 'export default 42;\n');
    await eventually('kubeloop dev to report the failed reload', async () => output.includes('reload failed, still serving the previous version'), 60_000);
    await createWidget('third');
    await eventually('Widget third labelled by the version still running', async () => (await labelOf('third')) === 'v2');
    dev?.child.kill('SIGINT');
    expect(await dev?.exited).toBe(0);
    expect(output).toContain('stopped cleanly');
  });
});
