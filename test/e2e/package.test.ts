// The out-of-repo path, from a packed tarball in an empty folder outside the repository: `kubeloop init`
// (through npx, as a user would), `npm install`, the scaffold's `npm test`, `kubeloop function ./src/index.ts`
// from the installed package, and the installed `kubeloop router` reconciling a real ConfigMap through it;
// then `kubeloop init --admission validating|mutating` from the installed package, reusing that install.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import type { AdmissionHook } from '../../api/admission-hook.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { resolveHook } from '../../webhooks/hook-spec.ts';
import { eventually } from '../cluster/eventually.ts';
import { createLoopServiceAccount } from '../cluster/loop-service-account.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { packTarball, type PackedTarball } from './package-tarball.ts';
import { installCrds } from './router-harness.ts';

const run = promisify(execFile);
const NAME = 'cm-labeller';
const LABEL = `${NAME}.example.com/reconciled`;
const ADMISSION_TYPES = ['validating', 'mutating'] as const;

let work = '';
let app = '';
let tarball: PackedTarball;
let suite: ClusterSuite;
const children: ChildProcess[] = [];
const figures: string[] = [];

async function timed<T>(what: string, step: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await step();
  figures.push(`${what}: ${((performance.now() - started) / 1000).toFixed(1)}s`);
  return result;
}

/** Runs the installed `kubeloop` (node_modules/kubeloop/cli/bin.js) and resolves with the first log line matching. */
function startInstalled(args: string[], ready: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  const child = spawn(process.execPath, [join(app, 'node_modules', 'kubeloop', 'cli', 'bin.js'), ...args], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return;
      }
      if (ready(line)) resolve(line);
    });
    child.on('exit', (code) => reject(new Error(`kubeloop ${args[0]} exited ${code}: ${stderr}`)));
  });
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'kubeloop-package-'));
  app = join(work, NAME);
  suite = await setupClusterSuite('package');
  tarball = await timed('npm pack (build on prepack)', () => packTarball(work));
  figures.push(`tarball: ${(tarball.bytes / 1024).toFixed(0)} KiB, ${tarball.files} files`);
  // As `npx kubeloop init` would, with the package taken from the tarball instead of the registry.
  await timed('npx kubeloop init', () =>
    run('npx', ['--yes', `--package=${tarball.path}`, 'kubeloop', 'init', NAME, '--for', 'v1/ConfigMap', `--kubeloop-spec=file:${tarball.path}`], { cwd: work }),
  );
  await timed('npm install (tarball + scaffold dev dependencies)', () => run('npm', ['install', '--no-audit', '--no-fund'], { cwd: app }));
  // The admission scaffolds need the same packages: their node_modules is the install above.
  for (const type of ADMISSION_TYPES) {
    await timed(`kubeloop init --admission ${type}`, () =>
      run(process.execPath, [join(app, 'node_modules', 'kubeloop', 'cli', 'bin.js'), 'init', `hook-${type}`, '--admission', type, `--kubeloop-spec=file:${tarball.path}`], { cwd: work }),
    );
    await symlink(join(app, 'node_modules'), join(work, `hook-${type}`, 'node_modules'), 'dir');
  }
});

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await suite?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  console.log(`package e2e figures:\n  ${figures.join('\n  ')}`);
});

describe('kubeloop from a packed tarball, outside the repository', () => {
  it("passes the scaffold's npm test right after init and install", async () => {
    const { stdout } = await timed('scaffold npm test', () => run('npm', ['test'], { cwd: app }));
    // node:test's summary: "# pass 4" (TAP, Node 20) or "ℹ pass 4" (spec reporter, Node 24).
    expect(stdout).toMatch(/^[#ℹ] pass 4$/m);
    expect(stdout).toMatch(/^[#ℹ] fail 0$/m);
  });

  it("passes `kubeloop replay` of the scaffold's fixture", async () => {
    const { stdout } = await run(process.execPath, [join(app, 'node_modules', 'kubeloop', 'cli', 'bin.js'), 'replay', 'fixtures', '--function', './src/index.ts'], { cwd: app });
    expect(stdout).toContain('1 passed, 0 failed');
  });

  it('serves the scaffold with `kubeloop function ./src/index.ts` and a Loop reconciles a real ConfigMap through it', async () => {
    const serving = await startInstalled(['function', './src/index.ts', '--port=0', '--host=127.0.0.1'], (line) => line.msg === `serving function ${NAME}`);
    const url = String(serving.url);
    // The generated Loop, pointed at the local process and limited to this suite's namespace.
    // and acting as a ServiceAccount of this namespace (the generated one lives in kubeloop-system).
    const [loop] = parseAllDocuments(await readFile(join(app, 'loop.yaml'), 'utf8')).map((d) => d.toJS()) as Array<{ spec: Record<string, unknown> & { function: { url: string } } }>;
    if (!loop) throw new Error('loop.yaml holds no Loop');
    loop.spec.function.url = `${url}/reconcile`;
    loop.spec.namespaces = [suite.namespace];
    const client = await KubeClient.fromKubeConfig(suite.kubeConfig);
    try {
      await installCrds(client, ['loops.kubeloop.dev.yaml']);
      loop.spec.serviceAccount = await createLoopServiceAccount(client, { namespace: suite.namespace });
    } finally {
      await client.close();
    }
    await writeFile(join(app, 'loops.local.yaml'), stringify(loop));
    const routerArgs = ['router', `--kubeconfig=${suite.kubeconfigPath}`, '--loops=loops.local.yaml', '--allow-loopback-functions', '--port=0', '--host=127.0.0.1'];
    await startInstalled(routerArgs, (line) => line.msg === 'router started');

    const core = suite.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: suite.namespace, body: { metadata: { name: 'settings' }, data: { color: 'blue' } } });
    await eventually(`ConfigMap settings labelled ${LABEL}=true`, async () => {
      const live = await core.readNamespacedConfigMap({ name: 'settings', namespace: suite.namespace });
      return live.metadata?.labels?.[LABEL] === 'true';
    });
    // The event action comes after the patch, and the router records events asynchronously.
    await eventually('a Reconciled event on ConfigMap settings', async () => {
      const events = await core.listNamespacedEvent({ namespace: suite.namespace, fieldSelector: 'involvedObject.name=settings' });
      return events.items.some((e) => e.reason === 'Reconciled');
    });
  });

  it.each(ADMISSION_TYPES)("passes the %s admission scaffold's npm test and `kubeloop replay` of its fixture", async (type) => {
    const project = join(work, `hook-${type}`);
    const { stdout } = await timed(`${type} admission scaffold npm test`, () => run('npm', ['test'], { cwd: project }));
    expect(stdout).toMatch(/^[#ℹ] pass 4$/m);
    expect(stdout).toMatch(/^[#ℹ] fail 0$/m);
    const replayed = await run(process.execPath, [join(app, 'node_modules', 'kubeloop', 'cli', 'bin.js'), 'replay', 'fixtures', '--function', './src/index.ts'], { cwd: project });
    expect(replayed.stdout).toContain('1 passed, 0 failed');
    // The hook it wrote is one the gateway accepts as is.
    const [hook] = parseAllDocuments(await readFile(join(project, 'admission-hook.yaml'), 'utf8')).map((d) => d.toJS()) as AdmissionHook[];
    const resolved = resolveHook(hook ?? {});
    expect(resolved.ok && resolved.hook.spec.type).toBe(type);
  });
});
