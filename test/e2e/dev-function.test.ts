// `kubeloop dev --tenant team-a` with users' projects, as docs/tenants.md prints it: dev starts with the page's
// flags (my-controller's Loop and require-team's AdmissionHook, both as `kubeloop init` wrote them) plus a
// Python Loop run by command and a project with its own CRD; then, as the printed tenant user (only `admin`
// in team-a) with the real kubectl, the page's can-i lines answer as printed (the chart's aggregated roles),
// its controller and webhook steps work unchanged (the Services the files name reach the local processes, the
// chart's admission policies judge the files), `kubeloop history` answers, a save reloads the TypeScript and
// the Python function, a hook whose function is down carries a condition naming it and its log, a broken
// edit keeps the previous version serving, and Ctrl+C stops it all.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { run as init } from '../../cli/commands/init.ts';
import { eventually } from '../cluster/eventually.ts';
import { captureCommand } from '../http/capture-console.ts';
import { extractSnippets } from '../http/markdown-snippets.ts';
import { startDev, stopDev, type DevProcess } from './dev-process.ts';
import { REPO_ROOT } from '../support/production-bundle.ts';

const execute = promisify(execFile);
const kubectl = inject('clusterBinaries').kubectl;
const TENANT = 'team-a';
const WIDGET_LABEL = 'dev-fn.example.com/reconciled';

let dev: DevProcess | undefined;
let output = '';
let workDir = '';
let tenantKubeconfig = '';

/** The ```sh block of docs/tenants.md marked `marker`, as lines without comments. */
async function pageLines(marker: string): Promise<string[]> {
  const page = 'docs/tenants.md';
  const block = extractSnippets(page, await readFile(join(REPO_ROOT, page), 'utf8'), 'sh').find((s) => s.marker.split(' ')[0] === marker);
  if (!block) throw new Error(`${page} has no sh block marked ${marker}`);
  return block.code.trimEnd().split('\n').map((line) => line.replace(/\s+#.*$/, ''));
}

/** Runs a printed line as the tenant user: the real kubectl first on PATH, this checkout's kubeloop for `kubeloop`. */
async function asTenant(line: string, cwd = workDir): Promise<string> {
  const command = line.replace(/^(npx )?kubeloop /, `node ${join(REPO_ROOT, 'cli', 'bin.js')} `);
  const { stdout } = await execute('sh', ['-c', command], { cwd, env: { ...process.env, KUBELOOP_FROM_SOURCE: '1', KUBECONFIG: tenantKubeconfig, PATH: `${dirname(kubectl)}:${process.env.PATH ?? ''}` } });
  return stdout;
}

async function kube(args: string[]): Promise<string> {
  const { stdout } = await execute(kubectl, ['--kubeconfig', tenantKubeconfig, '-n', TENANT, ...args]);
  return stdout;
}

/** `kubeloop init <name> ...args` in the work folder; a TypeScript project's import of the package points at this checkout. */
async function initProject(name: string, args: string[]): Promise<string> {
  const dir = join(workDir, name);
  const { code, output: printed } = await captureCommand(init, [dir, ...args]);
  if (code !== 0) throw new Error(`kubeloop init ${name} failed: ${printed}`);
  if (!args.includes('--language')) {
    const source = await readFile(join(dir, 'src', 'index.ts'), 'utf8');
    await writeFile(join(dir, 'src', 'index.ts'), source.replace("from 'kubeloop'", `from ${JSON.stringify(join(REPO_ROOT, 'lib', 'sdk', 'index.ts'))}`));
  }
  return dir;
}

/**
 * A page section's first three kubectl lines in the project's folder, as printed: apply function.yaml, apply the
 * Loop or hook file, get it until READY True. Returns the section's further kubectl lines.
 */
async function applyAsPrinted(marker: string, project: string): Promise<string[]> {
  // The page's `kubectl create secret` is skipped on dev, as it says: dev made the Loop's signing Secret.
  const lines = (await pageLines(marker)).filter((line) => line.startsWith('kubectl') && !line.startsWith('kubectl create secret'));
  const [applyFunction = '', applyFile = '', get = '', ...rest] = lines;
  await asTenant(applyFunction, join(workDir, project));
  await asTenant(applyFile, join(workDir, project));
  // NAME, FOR (or TYPE), ..., READY: the row of the project with a True in it.
  await eventually(`${project} READY True`, async () => new RegExp(`^${project}\\s.*\\sTrue\\s`, 'm').test(await asTenant(get)), 60_000);
  return rest;
}

const labelOf = async (kind: string, name: string, label: string) => (await kube(['get', kind, name, '-o', `jsonpath={.metadata.labels.${label.replace(/\./g, '\\.')}}`])).trim();

async function createWidget(name: string): Promise<void> {
  const sample = parse(await readFile(join(workDir, 'dev-fn', 'widget.yaml'), 'utf8')) as { metadata: Record<string, unknown> };
  const file = join(workDir, `${name}.yaml`);
  await writeFile(file, stringify({ ...sample, metadata: { name } }));
  await kube(['apply', '-f', file]);
}

async function localFunction(path: string): Promise<{ status?: string; message?: string }> {
  const object = JSON.parse(await kube(['get', path, '-o', 'json'])) as { status?: { conditions?: Array<{ type: string; status: string; message: string }> } };
  return object.status?.conditions?.find((c) => c.type === 'LocalFunction') ?? {};
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'kubeloop-dev-function-'));
  await initProject('my-controller', ['--for', 'apps/v1/Deployment', '--owns', 'v1/Service']);
  await initProject('require-team', ['--admission', 'validating']);
  await initProject('py-controller', ['--language', 'python', '--for', 'apps/v1/Deployment']);
  await initProject('dev-fn', ['--crd', 'example.com/v1alpha1/Widget']);
  // The page's dev line, with this test's state folder and the two further projects.
  const [devLine = ''] = (await pageLines('tenant-dev')).filter((line) => line.startsWith('npx kubeloop dev '));
  const pageArgs = devLine.replace('npx kubeloop dev ', '').split(' ');
  expect(pageArgs).toEqual(expect.arrayContaining(['--tenant', TENANT, '--hook', 'require-team/admission-hook.yaml']));
  dev = await startDev(
    [...pageArgs, '--function-command', 'python3 function.py', '--loop', 'py-controller/loop.yaml', '--function', 'dev-fn/src/index.ts', '--loop', 'dev-fn/loop.yaml', '--dir', join(workDir, 'state'), '--status-interval-seconds', '1'],
    { cwd: workDir, env: { ...process.env, KUBELOOP_FROM_SOURCE: '1' }, onOutput: (text) => (output += text) },
  );
  tenantKubeconfig = /^tenant kubeconfig: (\S+)/m.exec(output)?.[1] ?? '';
}, 400_000);

afterAll(async () => {
  await stopDev(dev);
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('kubeloop dev --tenant, docs/tenants.md as printed', () => {
  it('prints the namespace admin\'s kubeconfig, each project\'s process and the Service address it stands in for', () => {
    expect(tenantKubeconfig).toBe(join(workDir, 'state', `${TENANT}.kubeconfig`));
    expect(output).toMatch(/installed from the chart \(helm template, as helm install would\): .*ClusterRoles?.*ValidatingAdmissionPolic/);
    for (const name of ['my-controller', 'require-team', 'py-controller', 'dev-fn']) expect(output).toMatch(new RegExp(`function-${name}-1 +http://127\\.0\\.0\\.1:\\d+`));
    expect(output).toMatch(/Service team-a\/require-team:8080 -> 127\.\d+\.\d+\.\d+:8080/);
    expect(output).not.toContain('function-podset');
  });

  it("answers the page's can-i lines as printed: the chart's aggregated roles on dev", async () => {
    const lines = await pageLines('tenant-can-i');
    expect(lines).toHaveLength(3);
    const answers = await Promise.all(lines.map((line) => asTenant(line).then((out) => out.trim(), (error: { stdout?: string }) => (error.stdout ?? '').trim())));
    expect(answers).toEqual(['yes', 'yes', 'no']);
  });

  it("judges the tenant's Loops by the chart's admission policy: a function URL on loopback is refused, naming the field", async () => {
    const [document] = parseAllDocuments(await readFile(join(workDir, 'my-controller', 'loop.yaml'), 'utf8'));
    const loop = document?.toJS() as { metadata: Record<string, unknown>; spec: { function: Record<string, unknown> } };
    const file = join(workDir, 'loopback-loop.yaml');
    await writeFile(file, stringify({ ...loop, metadata: { ...loop.metadata, name: 'loopback' }, spec: { ...loop.spec, function: { url: 'http://127.0.0.1:8080/' } } }));
    const refused = await kube(['apply', '-f', file]).then(() => 'applied', (error: { stderr?: string }) => error.stderr ?? '');
    expect(refused).toContain("ValidatingAdmissionPolicy 'kubeloop-loops'");
    expect(refused).toContain('spec.function.url: host 127.0.0.1 is an IP literal');
  });

  it("runs the controller's kubectl lines unchanged: the Loop's ref reaches the local function and labels the Deployment", async () => {
    const [create, show] = await applyAsPrinted('tenant-controller', 'my-controller');
    await asTenant(create ?? '');
    await eventually('web labelled by my-controller', async () => (await asTenant(show ?? '')).includes('my-controller.example.com/reconciled=true'), 60_000);
  });

  it("shows the Deployment's reconciles with the page's `kubeloop history` line, as the tenant", async () => {
    const [line = ''] = (await pageLines('tenant-dev')).filter((l) => l.startsWith('kubeloop history'));
    const shown = await eventually('the history of web', async () => {
      const text = await asTenant(line);
      return /\d+ reconciles?, oldest first/.test(text) && text;
    });
    expect(shown).toContain(`Deployment ${TENANT}/web`);
  });

  it("runs the webhook's kubectl lines unchanged: the hook's service reaches the local function, which denies and admits", async () => {
    const [denied, admitted] = await applyAsPrinted('tenant-webhook', 'require-team');
    const denial = await eventually('a Pod without a team label denied', async () => {
      try {
        await asTenant(`${denied ?? ''} --dry-run=server`);
        return false;
      } catch (error) {
        return (error as { stderr?: string }).stderr ?? 'denied';
      }
    }, 60_000);
    expect(denial).toContain('Pod "no-label" needs a "team" label');
    await asTenant(admitted ?? '');
  });

  it('reloads the Python function on save: the new version labels the next Deployment', async () => {
    const file = join(workDir, 'py-controller', 'function.py');
    await eventually('web labelled by py-controller', async () => (await labelOf('deployment', 'web', 'py-controller.example.com/reconciled')) === 'true', 60_000);
    const source = await readFile(file, 'utf8');
    await writeFile(file, source.replaceAll('RECONCILED_LABEL) == "true"', 'RECONCILED_LABEL) == "v2"').replaceAll('RECONCILED_LABEL: "true"', 'RECONCILED_LABEL: "v2"'));
    await eventually('kubeloop dev to report the reload', async () => /reloaded `python3 function\.py`: http:\/\/127\.0\.0\.1:\d+/.test(output), 90_000);
    await kube(['create', 'deployment', 'web2', '--image=nginx']);
    await eventually('web2 labelled by the new version', async () => (await labelOf('deployment', 'web2', 'py-controller.example.com/reconciled')) === 'v2', 60_000);
    expect(await readFile(join(workDir, 'state', 'logs', 'function-py-controller-1.log'), 'utf8')).not.toBe('');
  });

  it('gives the hook whose function is down a LocalFunction condition naming the module and its log, and a save brings it back', async () => {
    const pid = Number(/function-require-team-1 +http:\/\/127\.0\.0\.1:\d+ +pid (\d+)/.exec(output)?.[1]);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    const down = await eventually('the hook to say its function is not listening', async () => {
      const condition = await localFunction('admissionhook/require-team');
      return condition.status === 'False' && condition.message;
    }, 60_000);
    expect(down).toContain('require-team/src/index.ts');
    expect(down).toContain(join(workDir, 'state', 'logs', 'function-require-team-1.log'));
    // A Pod the hook would admit is refused while the function is down (failurePolicy Fail), naming the Service.
    await expect(kube(['run', 'while-down', '--image=nginx', '-l', 'team=a', '--dry-run=server'])).rejects.toThrow(/require-team\.team-a\.svc/);
    const index = join(workDir, 'require-team', 'src', 'index.ts');
    await writeFile(index, `${await readFile(index, 'utf8')}\n`);
    await eventually('the hook to say its function listens again', async () => (await localFunction('admissionhook/require-team')).status === 'True', 90_000);
    await eventually('a labelled Pod admitted again', async () => kube(['run', 'after', '--image=nginx', '-l', 'team=a', '--dry-run=server']).then(() => true, () => false), 60_000);
  });

  it("installs a project's CRD, reconciles its kind as the tenant's Loop, and reloads the TypeScript function on save", async () => {
    expect(output).toContain('installed widgets.example.com');
    await createWidget('first');
    await eventually('Widget first labelled', async () => (await labelOf('widget', 'first', WIDGET_LABEL)) === 'true', 60_000);
    const index = join(workDir, 'dev-fn', 'src', 'index.ts');
    const source = await readFile(index, 'utf8');
    await writeFile(index, source.replace("[RECONCILED_LABEL]: 'true'", "[RECONCILED_LABEL]: 'v2'").replace("=== 'true') return", "=== 'v2') return"));
    await eventually('kubeloop dev to report the reload', async () => /reloaded .*dev-fn\/src\/index\.ts: http:\/\/127\.0\.0\.1:\d+/.test(output), 60_000);
    await createWidget('second');
    await eventually('Widget second labelled by the new version', async () => (await labelOf('widget', 'second', WIDGET_LABEL)) === 'v2', 60_000);
    expect(await readFile(join(workDir, 'state', 'logs', 'function-dev-fn-1.log'), 'utf8')).toContain('shutdown complete');
  });

  it('keeps serving the previous version when an edit does not load, and stops cleanly on Ctrl+C', async () => {
    await writeFile(join(workDir, 'dev-fn', 'src', 'index.ts'), 'export default 42;\n');
    await eventually('kubeloop dev to report the failed reload', async () => output.includes('reload failed, still serving the previous version'), 60_000);
    await createWidget('third');
    await eventually('Widget third labelled by the version still running', async () => (await labelOf('widget', 'third', WIDGET_LABEL)) === 'v2', 60_000);
    dev?.child.kill('SIGINT');
    expect(await dev?.exited).toBe(0);
    expect(output).toContain('stopped cleanly');
  }, 90_000);
});
