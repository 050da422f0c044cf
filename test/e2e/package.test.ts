// The out-of-repo path, from a packed tarball in an empty folder outside the repository, on a PATH whose
// first `node` is the machine's older one (20 here and on CI): README's newcomer lines as printed (Node 24
// from the npm registry, `npx kubeloop init`, `npm install && npm test`, `render`, `npm run replay`), with
// the tarball standing in for the registry; then docs/writing-a-function.md's example pasted in and its
// fixture lines; `kubeloop function ./src/index.ts` from the installed package and the installed `kubeloop
// router` reconciling a real Deployment through it; then `kubeloop init --admission validating|mutating`;
// then README's Python and Go newcomer lines, each in an empty folder of its own; and the scaffold's cluster
// test (kubeloop/testing/cluster) as `npm run test:cluster` runs it.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import type { AdmissionHook } from '../../api/admission-hook.ts';
import { cacheRoot } from '../../cli/cluster/index.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { resolveHook } from '../../webhooks/base/hook-spec.ts';
import { eventually } from '../cluster/eventually.ts';
import { createLoopServiceAccount } from '../support/loop-service-account.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { extractSnippets } from '../http/markdown-snippets.ts';
import { packTarball, type PackedTarball } from '../support/package-tarball.ts';
import { installCrds } from '../support/router-harness.ts';

const run = promisify(execFile);
const REPO = new URL('../../', import.meta.url);
const NAME = 'my-controller';
const LABEL = `${NAME}.example.com/reconciled`;
const ADMISSION_TYPES = ['validating', 'mutating'] as const;
const LANGUAGES = ['python', 'go'] as const;

let work = '';
let newcomerEnv: NodeJS.ProcessEnv = {};
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

/** The machine's own node when it is older than 24 (a newcomer's situation), else none. */
function olderNodeDir(): string | undefined {
  const found = ['/usr/bin/node', '/usr/local/bin/node'].find((node) => {
    try {
      return Number(execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' })) < 24;
    } catch {
      return false;
    }
  });
  return found && dirname(found);
}

/**
 * A newcomer's shell: HOME of its own (npm's download cache shared, so node@24 is not fetched again), no npm
 * script variables, and PATH with the machine's older node first and no Node 24 on it.
 */
function newcomerEnvironment(home: string): NodeJS.ProcessEnv {
  const older = olderNodeDir();
  const rest = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '' && dir !== older && !existsSync(join(dir, 'node')));
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|NODE_OPTIONS$|VITEST|KUBELOOP_|PYTHONPATH$)/i.test(key)));
  // Go's build cache shared too, so `go test` does not compile the standard library again in a fresh HOME.
  const goCache = process.env.GOCACHE ?? join(homedir(), '.cache', 'go-build');
  return { ...inherited, HOME: home, npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm'), GOCACHE: goCache, PATH: [older ?? dirname(process.execPath), ...rest].join(delimiter) };
}

/** A printed line with the one change: `npx kubeloop` finds the package in the tarball, as it will on the registry. */
function fromTarball(line: string): string {
  return line.replace('npx kubeloop init', `npx --yes --package=${tarball.path} kubeloop init`);
}

/** Lines of a ```sh block of a page whose marker starts with `marker`. */
async function shellLines(page: string, marker: string): Promise<string[]> {
  const block = extractSnippets(page, await readFile(new URL(page, REPO), 'utf8'), 'sh').find((s) => s.marker.split(' ')[0] === marker);
  if (!block) throw new Error(`${page} has no \`\`\`sh block marked "snippet: ${marker}"`);
  return block.code.trimEnd().split('\n');
}

/**
 * Runs shell lines in one bash session (cd and export carry over), stopping at the first that fails; prints
 * "@@ <n> <seconds>" before each, so a failure names its line and steps can be timed.
 */
async function runLines(lines: string[], cwd: string, env: NodeJS.ProcessEnv = newcomerEnv): Promise<{ stdout: string; stderr: string; startedAt: number[] }> {
  const script = ['set -eo pipefail'];
  let heredoc: string | undefined;
  lines.forEach((line, n) => {
    // Inside a here-document (cat > file <<'END' ... END) lines are data, not commands to mark.
    if (heredoc === undefined) script.push(`echo "@@ ${n} $EPOCHREALTIME"`);
    script.push(line);
    if (heredoc !== undefined && line === heredoc) heredoc = undefined;
    else if (heredoc === undefined) heredoc = /<<-?'?(\w+)'?/.exec(line)?.[1];
  });
  try {
    const { stdout, stderr } = await run('bash', ['-c', script.join('\n')], { cwd, env, maxBuffer: 64 * 1024 * 1024 });
    return { stdout, stderr, startedAt: [...stdout.matchAll(/^@@ (\d+) ([\d.]+)$/gm)].map((m) => Number(m[2])) };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string };
    const last = [...failed.stdout.matchAll(/^@@ (\d+) /gm)].pop()?.[1];
    throw new Error(`line ${last === undefined ? '?' : lines[Number(last)]} failed:\n${failed.stdout.slice(-3000)}\n${failed.stderr.slice(-3000)}`);
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'kubeloop-package-'));
  app = join(work, NAME);
  await mkdir(join(work, 'home'));
  newcomerEnv = newcomerEnvironment(join(work, 'home'));
  suite = await setupClusterSuite('package');
  tarball = await timed('npm pack (build on prepack)', () => packTarball(work));
  figures.push(`tarball: ${(tarball.bytes / 1024).toFixed(0)} KiB, ${tarball.files} files`);
});
afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await suite?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  console.log(`package e2e figures:\n  ${figures.join('\n  ')}`);
});

describe('kubeloop from a packed tarball, outside the repository', () => {
  it("runs README's newcomer lines as printed, on a machine whose node is older: init, install, a green npm test, render, replay", async () => {
    const lines = await shellLines('README.md', 'newcomer');
    const until = lines.findIndex((line) => line.startsWith('npm run replay'));
    expect(until).toBeGreaterThan(0);
    // The one change: `npx kubeloop` finds the package in the tarball, as it will on the registry.
    const printed = lines.slice(0, until + 1).map(fromTarball);
    expect(printed.join('\n')).toContain(`--package=${tarball.path} kubeloop init ${NAME}`);
    const { stdout, startedAt } = await runLines(printed, work);
    const initAt = startedAt[lines.findIndex((line) => line.startsWith('npx kubeloop init'))] ?? 0;
    const renderAt = startedAt[lines.findIndex((line) => line.startsWith('npx kubeloop render'))] ?? 0;
    figures.push(`README newcomer lines, init to a green npm test: ${(renderAt - initAt).toFixed(1)}s`);
    // node:test's summary with the spec reporter: the scaffold's four tests pass, on Node 24 from node@24.
    expect(stdout).toMatch(/^ℹ pass 4$/m);
    expect(stdout).toMatch(/^ℹ fail 0$/m);
    // render: the sample Deployment init wrote, labelled by the scaffold's patch.
    expect(stdout).toContain('# event Normal Reconciled: Deployment example reconciled by my-controller');
    expect(stdout).toContain('1 passed, 0 failed');
    // init depended on the tarball it ran from, not on a registry version that does not exist.
    const pkg = JSON.parse(await readFile(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(pkg.dependencies.kubeloop).toBe(`file:${tarball.path}`);
    expect(pkg.devDependencies.node).toMatch(/^\^24\./);
  });

  it.runIf(olderNodeDir())('says on the older node that kubeloop needs Node 24 and how to get it (exit 2)', async () => {
    const failed = await run(join(olderNodeDir() ?? '', 'node'), [join(app, 'node_modules', 'kubeloop', 'cli', 'bin.js'), '--help']).catch((error: unknown) => error as { code: number; stderr: string });
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain('kubeloop needs Node.js 24 or newer');
    // README's `npx kubeloop init` on that node, in an empty folder: npm's engine warnings come first (it prints them
    // while installing, before any kubeloop code runs), then kubeloop's message is the last thing said; no crash.
    const empty = await mkdtemp(join(work, 'empty-'));
    const npx = await run('bash', ['-c', fromTarball('npx kubeloop init my-controller')], { cwd: empty, env: newcomerEnv }).catch((error: unknown) => error as { code: number; stderr: string });
    expect(npx).toMatchObject({ code: 2 });
    const said = (npx as { stderr: string }).stderr.trimEnd();
    expect(said.slice(said.lastIndexOf('kubeloop needs Node.js 24 or newer'))).toMatch(/^kubeloop needs Node\.js 24 or newer; this is Node\.js 2\d\.[\s\S]*which npm scripts and npx put first on PATH\.$/);
    expect(said).not.toMatch(/^\s+at /m);
    expect(existsSync(join(empty, 'my-controller'))).toBe(false);
  });

  it("runs the scaffold's cluster test with `npm run test:cluster`: kubeloop/testing/cluster from the installed package starts a control plane, applies loop.yaml as a namespace admin, and the Deployment is labelled", async () => {
    // As printed in the scaffold's README, on the newcomer's PATH (npm puts the project's node@24 first).
    // The newcomer's HOME is new, and so would be its ~/.cache/kubeloop: the control plane this machine built once is
    // named instead (a user's own machine builds it into their cache on the first run, docs/writing-a-function.md).
    const withBinaries = { ...newcomerEnv, KUBELOOP_CACHE_DIR: cacheRoot() };
    const { stdout } = await timed('npm run test:cluster (a control plane of its own)', () => runLines(['npm run test:cluster'], app, withBinaries));
    expect(stdout).toContain('# installed from the chart:');
    expect(stdout).toMatch(/^✔ labels a new Deployment in the namespace, through the router/m);
    expect(stdout).toMatch(/^ℹ pass 1$/m);
    expect(stdout).toMatch(/^ℹ fail 0$/m);
  }, 600_000);

  it('serves `kubeloop console` from the installed package: its bundled page, script and styles, nothing fetched from elsewhere', async () => {
    const child = spawn(process.execPath, [join(app, 'node_modules', 'kubeloop', 'cli', 'bin.js'), 'console', '--port', '0', '--kubeconfig', suite.kubeconfigPath], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const found = /^kubeloop console on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
        if (found?.[1]) resolve(found[1]);
      });
      child.on('exit', (code) => reject(new Error(`kubeloop console exited ${code}`)));
    });
    const page = await (await fetch(`${url}/`)).text();
    const script = await fetch(`${url}/app.js`);
    const styles = await (await fetch(`${url}/app.css`)).text();
    expect(page).toContain('<script type="module" src="app.js">');
    expect(script.status).toBe(200);
    expect((await script.text()).length).toBeGreaterThan(10_000);
    // Offline: no font, script or stylesheet from another host.
    for (const text of [page, styles]) expect(text).not.toMatch(/https?:\/\//);
    // It reads the cluster as the kubeconfig's user.
    const overview = (await (await fetch(`${url}/api/overview`)).json()) as { rows: unknown[] };
    expect(Array.isArray(overview.rows)).toBe(true);
    child.kill('SIGTERM');
  });

  it('serves the scaffold with `kubeloop function ./src/index.ts` and a Loop reconciles a real Deployment through it', async () => {
    const serving = await startInstalled(['function', './src/index.ts', '--port=0', '--host=127.0.0.1'], (line) => line.msg === `serving function ${NAME}`);
    const url = String(serving.url);
    // The generated namespaced Loop, run by the installed router from a --loops file: in this suite's
    // namespace, acting as a ServiceAccount of it, pointed at the local process instead of the function's Service.
    const [loop] = parseAllDocuments(await readFile(join(app, 'loop.yaml'), 'utf8')).map((d) => d.toJS()) as Array<{ kind: string; metadata: Record<string, unknown>; spec: Record<string, unknown> & { function: { url?: string; ref?: unknown; signingSecretRef?: unknown } } }>;
    if (!loop) throw new Error('loop.yaml holds no Loop');
    expect(loop.kind).toBe('Loop');
    loop.metadata.namespace = suite.namespace;
    delete loop.spec.function.ref;
    // Unsigned, as the process started above has no key (its signed path: npm run test:cluster, above).
    delete loop.spec.function.signingSecretRef;
    loop.spec.function.url = `${url}/reconcile`;
    const client = await KubeClient.fromKubeConfig(suite.kubeConfig);
    try {
      await installCrds(client, ['clusterloops.kubeloop.dev.yaml', 'loops.kubeloop.dev.yaml']);
      loop.spec.serviceAccount = await createLoopServiceAccount(client, { namespace: suite.namespace });
    } finally {
      await client.close();
    }
    await writeFile(join(app, 'loops.local.yaml'), stringify(loop));
    const routerArgs = ['router', `--kubeconfig=${suite.kubeconfigPath}`, '--loops=loops.local.yaml', '--allow-loopback-functions', '--port=0', '--host=127.0.0.1'];
    await startInstalled(routerArgs, (line) => line.msg === 'router started');

    const core = suite.kubeConfig.makeApiClient(CoreV1Api);
    const apps = suite.kubeConfig.makeApiClient(AppsV1Api);
    const labels = { app: 'web' };
    await apps.createNamespacedDeployment({ namespace: suite.namespace, body: { metadata: { name: 'web' }, spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } } } });
    await eventually(`Deployment web labelled ${LABEL}=true`, async () => {
      const live = await apps.readNamespacedDeployment({ name: 'web', namespace: suite.namespace });
      return live.metadata?.labels?.[LABEL] === 'true';
    });
    // The event action comes after the patch, and the router records events asynchronously.
    await eventually('a Reconciled event on Deployment web', async () => {
      const events = await core.listNamespacedEvent({ namespace: suite.namespace, fieldSelector: 'involvedObject.name=web' });
      return events.items.some((e) => e.reason === 'Reconciled');
    });
  });

  it("goes green with docs/writing-a-function.md's example pasted in and its fixture lines run (a request-only fixture recorded by replay --update)", async () => {
    const page = extractSnippets('docs/writing-a-function.md', await readFile(new URL('docs/writing-a-function.md', REPO), 'utf8'));
    for (const file of ['src/index.ts', 'test/index.test.ts']) {
      const snippet = page.find((s) => s.file === file);
      if (!snippet) throw new Error(`docs/writing-a-function.md has no snippet for ${file}`);
      await writeFile(join(app, file), snippet.code);
    }
    // In the project, node_modules/.bin/node (the node@24 devDependency) is what npm scripts and npx run on.
    const { stdout } = await runLines(await shellLines('docs/writing-a-function.md', 'newcomer-fixtures'), app);
    expect(stdout).toMatch(/RECORDED .*annotated\.json {2}An annotated Deployment gets a Service on its port\./);
    expect(stdout).toMatch(/^ℹ pass 2$/m);
    expect(stdout).toContain('1 passed, 0 failed');
    const recorded = JSON.parse(await readFile(join(app, 'fixtures', 'annotated.json'), 'utf8')) as { response: { actions: Array<{ op: string }> } };
    expect(recorded.response.actions.map((a) => a.op)).toEqual(['apply']);
  });

  it.each(ADMISSION_TYPES)("passes the %s admission scaffold's npm test and `kubeloop replay` of its fixture", async (type) => {
    // init from the installed package: it depends on the tarball that package came from, as npm recorded it.
    await run(process.execPath, [join(app, 'node_modules', 'kubeloop', 'cli', 'bin.js'), 'init', `hook-${type}`, '--admission', type], { cwd: work });
    await symlink(join(app, 'node_modules'), join(work, `hook-${type}`, 'node_modules'), 'dir');
    const project = join(work, `hook-${type}`);
    const pkg = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies.kubeloop).toBe(`file:${tarball.path}`);
    const { stdout } = await timed(`${type} admission scaffold npm test`, () => run('npm', ['test'], { cwd: project }));
    expect(stdout).toMatch(/^[#ℹ] pass 4$/m);
    expect(stdout).toMatch(/^[#ℹ] fail 0$/m);
    const replayed = await run(process.execPath, [join(app, 'node_modules', 'kubeloop', 'cli', 'bin.js'), 'replay', 'fixtures', '--function', './src/index.ts'], { cwd: project });
    expect(replayed.stdout).toContain('1 passed, 0 failed');
    // The hook it wrote is one the gateway accepts as is.
    const [hook] = parseAllDocuments(await readFile(join(project, 'admission-hook.yaml'), 'utf8')).map((d) => d.toJS()) as AdmissionHook[];
    // A namespaced hook, stored as `kubectl apply -n team-a` stores it.
    expect(hook?.kind).toBe('AdmissionHook');
    const resolved = resolveHook({ ...hook, metadata: { ...hook?.metadata, namespace: 'team-a' } });
    expect(resolved.ok && resolved.hook.spec.type).toBe(type);
  });

  it.each(LANGUAGES)("runs README's %s newcomer lines as printed in an empty folder: init from the package, the scaffold's test green", async (language) => {
    // A new shell: README's Node 24 line first (node@24 is installed already, so it only puts it on PATH).
    const [node24] = await shellLines('README.md', 'newcomer');
    const lines = await shellLines('README.md', `newcomer-${language}`);
    // Up to the test line; the next one serves the function until stopped.
    const until = lines.findIndex((line) => line.startsWith('cd my-controller && '));
    expect(until).toBeGreaterThan(0);
    const folder = join(work, `newcomer-${language}`);
    await mkdir(folder);
    const { stdout, stderr, startedAt } = await runLines([node24 ?? '', ...lines.slice(0, until + 1).map(fromTarball)], folder);
    figures.push(`README ${language} newcomer lines, init to a green test: ${(Date.now() / 1000 - (startedAt[1] ?? 0)).toFixed(1)}s`);
    const project = join(folder, NAME);
    if (language === 'python') {
      // unittest reports on stderr: the scaffold's tests and its recorded fixture, on the vendored SDK.
      expect(stderr).toMatch(/^Ran 3 tests in [\d.]+s\n\nOK$/m);
      expect(existsSync(join(project, 'kubeloop', 'server.py'))).toBe(true);
    } else {
      expect(stdout).toMatch(new RegExp(`^ok\\s+example\\.com/${NAME}\\s`, 'm'));
      expect(await readFile(join(project, 'go.mod'), 'utf8')).toContain('=> ./kubeloop');
    }
  });
});
