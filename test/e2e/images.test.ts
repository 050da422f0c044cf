// What each container image runs, without a Docker engine: the production bundle (as the Dockerfile builds
// it), each target's ENTRYPOINT started from it, serving /healthz; the pod-name-label image as a plain HTTP
// container (PORT from the platform) answering a recorded request (docs/deploy.md); clean exit on SIGTERM; the
// router started from its V8 startup snapshot reconciling a Loop.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartCrdFiles } from '../../cli/chart-crds.ts';
import { FUNCTION_NODE_FLAGS, ROUTER_NODE_FLAGS } from '../../cli/node-flags.ts';
import { freePort } from '../../cli/cluster/free-port.ts';
import { admissionRegistry, functionRegistry, loadFunction } from '../../functions/registry.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { serveFunction } from '../../lib/runtime/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { writeTokenKubeconfig } from '../cluster/token-kubeconfig.ts';
import { createLoopServiceAccount } from '../support/loop-service-account.ts';
import { inlineLoop } from '../support/router-harness.ts';
import { buildProductionBundle, dockerfileTargets, entrypointNodeFlags, filesUnder, startEntrypoint, REPO_ROOT, type ImageTarget } from '../support/production-bundle.ts';

const run = promisify(execFile);

let bundleParent = '';
let bundle = '';
let targets: ImageTarget[] = [];
let cluster: ClusterSuite;
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

beforeAll(async () => {
  cluster = await setupClusterSuite('images');
  // The webhook's readiness waits for its Watcher cache: the CRDs must exist (idempotent server-side apply).
  await run(cluster.binaries.kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'apply', '--server-side', '--force-conflicts', ...chartCrdFiles(REPO_ROOT).flatMap((f) => ['-f', f])]);
  bundleParent = await mkdtemp(join(tmpdir(), 'kubeloop-bundle-'));
  bundle = join(bundleParent, 'app');
  await buildProductionBundle(bundle);
  targets = await dockerfileTargets();
}, 180_000);

afterAll(async () => {
  await insecure.close();
  if (bundleParent) await rm(bundleParent, { recursive: true, force: true });
  await cluster?.cleanup();
});

/** A kubeconfig for a fresh ServiceAccount of the suite's namespace with no RBAC bindings at all. */
async function powerlessKubeconfig(): Promise<string> {
  const kubectl = (...args: string[]): Promise<{ stdout: string }> => run(cluster.binaries.kubectl, ['--kubeconfig', cluster.kubeconfigPath, '-n', cluster.namespace, ...args]);
  await kubectl('create', 'serviceaccount', 'powerless');
  const { stdout: token } = await kubectl('create', 'token', 'powerless', '--duration=10m');
  return writeTokenKubeconfig(cluster.kubeconfigPath, 'powerless', token, join(bundleParent, 'powerless.kubeconfig'));
}

/** Flags and environment an image gets from its Deployment (or a platform) that the test must supply. */
async function deploymentSettings(target: string): Promise<{ flags: string[]; env: NodeJS.ProcessEnv; health: (port: number) => string }> {
  const port = await freePort();
  if (target.startsWith('function-')) return { flags: [`--port=${port}`], env: {}, health: () => `http://127.0.0.1:${port}/healthz` };
  if (target === 'router') {
    return {
      // A router with the admin's rights would start reconciling other suites' Loops in the shared control
      // plane; with a ServiceAccount that may do nothing it still starts and serves, which is what is tested.
      // Leader election as the chart runs it: without rights this replica stands by, serving its ops endpoints.
      flags: [
        `--port=${port}`,
        `--kubeconfig=${await powerlessKubeconfig()}`,
        '--leader-elect',
        `--lease-namespace=${cluster.namespace}`,
        '--lease-name=images-test-router',
      ],
      env: { POD_NAMESPACE: cluster.namespace },
      health: () => `http://127.0.0.1:${port}/healthz`,
    };
  }
  if (target === 'webhook') {
    // Probes go to the ops port, as the chart's do (the admission port may require the API server's certificate).
    const opsPort = await freePort();
    return {
      // Its own configuration name: the CA must never be injected into another suite's webhook configuration.
      flags: [`--port=${port}`, `--ops-port=${opsPort}`, `--kubeconfig=${cluster.kubeconfigPath}`, `--namespace=${cluster.namespace}`, `--configuration=${cluster.namespace}-absent`],
      env: { POD_NAMESPACE: cluster.namespace },
      health: () => `http://127.0.0.1:${opsPort}/healthz`,
    };
  }
  throw new Error(`images.test.ts does not know how to run the Dockerfile target "${target}"; add it to deploymentSettings`);
}

/** Every function the chart runs from an image: the reconcile functions and the Watcher sidecar injector. */
const FUNCTION_TARGETS = [...Object.keys(functionRegistry), ...Object.keys(admissionRegistry).filter((fn) => fn !== 'require-label')].map((fn) => `function-${fn}`);

describe('the Dockerfile', () => {
  it('has one target per deployable: router, webhook and every registered function (require-label is a sample)', () => {
    const expected = ['router', 'webhook', ...FUNCTION_TARGETS].sort();
    expect(targets.map((t) => t.target).sort()).toEqual(expected);
  });

  it('starts every function image with the node flags kubeloop dev starts its functions with (cli/node-flags.ts)', () => {
    for (const name of FUNCTION_TARGETS) {
      const target = targets.find((t) => t.target === name);
      expect(target && entrypointNodeFlags(target), name).toEqual(FUNCTION_NODE_FLAGS);
    }
  });

  it('ships only what the build copies (the .dockerignore allow-list covers every compiled directory)', async () => {
    const dockerfile = await readFile(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    const ignore = await readFile(join(REPO_ROOT, '.dockerignore'), 'utf8');
    const copied = [...dockerfile.matchAll(/^COPY (\S+) \.\/\S+$/gm)].map((m) => m[1]);
    const tsconfig = JSON.parse(await readFile(join(REPO_ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    for (const dir of tsconfig.include) {
      expect(copied, `Dockerfile copies ${dir}/`).toContain(dir);
      expect(ignore, `.dockerignore lets ${dir}/ through`).toContain(`!${dir}/**`);
    }
  });
});

describe('each image entrypoint, run from the production bundle', () => {
  it.each(['router', 'webhook', ...FUNCTION_TARGETS])(
    '%s starts, serves /healthz, writes nothing into the image and exits 0 on SIGTERM',
    async (name) => {
      const target = targets.find((t) => t.target === name);
      if (!target) throw new Error(`no Dockerfile target ${name}`);
      const before = await filesUnder(bundle);
      const settings = await deploymentSettings(name);
      const running = startEntrypoint(bundle, [...target.args, ...settings.flags], { ...target.env, ...settings.env });
      try {
        const status = await eventually(
          `${name} to answer ${settings.health(0)}`,
          async () => {
            // An exited process ends the wait at once (the assertion below shows its output).
            if (running.child.exitCode !== null) return `exited with ${running.child.exitCode}`;
            const reply = await request(settings.health(0), { dispatcher: insecure });
            await reply.body.dump();
            return reply.statusCode === 200 ? reply.statusCode : undefined;
          },
          60_000,
        );
        expect(status, running.output()).toBe(200);
        // The router sets V8's heap growing factor itself (NODE_OPTIONS refuses the flag): its start line says so.
        if (name === 'router') await eventually('the router to log its V8 setting', async () => running.output().includes('"v8":"--heap-growing-percent=50"') || undefined, 30_000);
      } finally {
        expect(await running.stop(), running.output()).toBe(0);
      }
      expect(await filesUnder(bundle)).toEqual(before);
    },
    90_000,
  );
});

describe('kubeloop --version in an image', () => {
  it("prints the package's version from package.json alone (an image has no charts/)", async () => {
    const { stdout } = await run(process.execPath, ['cli/bin.js', '--version'], { cwd: bundle, env: { PATH: process.env.PATH, NODE_ENV: 'production' } });
    const { version } = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(stdout.trim()).toBe(`kubeloop ${version}`);
  });
});

describe('the bundled entrypoints (cli/bundle-entrypoints.js)', () => {
  it('keep the exit codes and messages of the command line: a bad flag is a usage error (2), not a crash', async () => {
    const failed = await run(process.execPath, ['cli/bin.js', 'router', '--no-such-flag'], { cwd: bundle, env: { PATH: process.env.PATH, NODE_ENV: 'production' } }).catch(
      (error: unknown) => error as { code: number; stderr: string },
    );
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain("kubeloop router: Unknown option '--no-such-flag'");
  });
});

describe('the compile cache the Dockerfile builds (cli/warm-compile-cache.js)', () => {
  // Each with its ENTRYPOINT's node flags: V8 refuses a code cache made under other flags (--single-threaded). The
  // router's ENTRYPOINT starts from its V8 startup snapshot instead, which holds its modules loaded (tested below).
  it.each(['function-pod-name-label', 'webhook'])('lets the %s entrypoint load its compiled modules without compiling them', async (name) => {
    const target = targets.find((t) => t.target === name);
    if (!target) throw new Error(`no Dockerfile target ${name}`);
    // Node's own trace of its compile cache: each module read from it is "accepted"; one missing is "not initialized".
    const { stderr } = await run(process.execPath, [...target.args, '--help'], {
      cwd: bundle,
      env: { PATH: process.env.PATH, NODE_ENV: 'production', NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
    });
    const trace = stderr.split('\n');
    const fromDist = (word: string) => trace.filter((line) => line.includes(word) && line.includes(`${bundle}/dist/`));
    expect(fromDist('was accepted').length, stderr).toBeGreaterThan(5);
    // It runs from its bundle (cli/bundle-entrypoints.js), one module and a few chunks, not dist/cli's ~900 files.
    const command = target.args[entrypointNodeFlags(target).length + 1];
    expect(fromDist('was accepted').filter((line) => line.includes(`${bundle}/dist/bundle/${command}.mjs`)), stderr).toHaveLength(1);
    expect(fromDist('was not initialized')).toEqual([]);
    expect(fromDist('was rejected')).toEqual([]);
  });
});

describe('pod-name-label as a plain HTTP container (docs/deploy.md)', () => {
  it("listens on the PORT the platform sets and answers a recorded ReconcileRequest, without loading Node's TLS stack", async () => {
    const target = targets.find((t) => t.target === 'function-pod-name-label');
    if (!target) throw new Error('no Dockerfile target function-pod-name-label');
    const port = await freePort();
    // Which of Node's own modules the process loaded, written when it exits (a preload outside the image).
    const loadedList = join(bundleParent, 'function-builtins.json');
    const preload = join(bundleParent, 'list-builtins.cjs');
    await writeFile(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(loadedList)}, JSON.stringify(process.moduleLoadList)));\n`);
    // Exactly what Cloud Run, App Runner, Fly or Knative do: run the image's entrypoint (and ENV) with PORT set.
    const running = startEntrypoint(bundle, target.args, { ...target.env, NODE_OPTIONS: `${target.env.NODE_OPTIONS ?? ''} --require ${preload}`, PORT: String(port) });
    try {
      const fixture = JSON.parse(await readFile(join(REPO_ROOT, 'test/fixtures/pod-name-label/adds-label-to-annotated-pod.json'), 'utf8')) as {
        request: unknown;
        response: unknown;
      };
      const reply = await eventually('the container to answer', async () => {
        if (running.child.exitCode !== null) throw new Error(`exited with ${running.child.exitCode}:\n${running.output()}`);
        const r = await request(`http://127.0.0.1:${port}/reconcile`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(fixture.request),
        });
        return { status: r.statusCode, body: (await r.body.json()) as unknown };
      });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(fixture.response);
    } finally {
      expect(await running.stop(), running.output()).toBe(0);
    }
    // Plain HTTP needs no TLS: node:https, http2 and tls cost ~3 MiB of a function's RSS (cli/bundle-options.js);
    // nor, having served a request, what no unsigned function uses: crypto (lib/signing/webhook-signature.ts), the
    // fs/promises and undici that ES imports of node:fs and node:http would load, zlib and assert (cli/deferred-requires.js).
    const loaded = JSON.parse(await readFile(loadedList, 'utf8')) as string[];
    expect(loaded).toContain('NativeModule http');
    expect(loaded.filter((m) => /^NativeModule (https|http2|tls|_tls_wrap|crypto|internal\/fs\/promises|internal\/deps\/undici\/undici|zlib|assert)$/.test(m))).toEqual([]);
  });
});

describe("the router image's startup snapshot (cli/build-snapshot.js)", () => {
  it('starts the router from the snapshot, which reconciles a Loop and logs with its own pid', async () => {
    const target = targets.find((t) => t.target === 'router');
    if (!target) throw new Error('no Dockerfile target router');
    // The image starts the router with its node flags (cli/node-flags.ts) from the blob its build made; a missing or
    // refused blob, or a flag the snapshot refuses, would fail the start.
    expect(target.args).toEqual([...ROUTER_NODE_FLAGS, '--snapshot-blob', 'dist/bundle/router.blob', 'router']);
    const client = await KubeClient.fromKubeConfig(cluster.kubeConfig);
    const fn = await serveFunction(await loadFunction('pod-name-label'), { port: 0, host: '127.0.0.1', logLevel: 'warn' });
    const port = await freePort();
    // Inline Loops only (--loops), confined to this suite's namespace: no other suite's Loop objects are run.
    await createLoopServiceAccount(client, { namespace: cluster.namespace });
    const loopsFile = join(bundleParent, 'snapshot-loops.yaml');
    await writeFile(loopsFile, JSON.stringify(inlineLoop('snapshot-label', cluster.namespace, { for: { apiVersion: 'v1', kind: 'Pod' }, metadataOnly: true, function: { url: fn.url } })));
    const flags = [`--port=${port}`, '--host=127.0.0.1', `--kubeconfig=${cluster.kubeconfigPath}`, `--loops=${loopsFile}`, '--allow-loopback-functions'];
    const running = startEntrypoint(bundle, [...target.args, ...flags], target.env);
    try {
      await client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${cluster.namespace}/pods`,
        body: { metadata: { name: 'from-snapshot', annotations: { 'kubeloop.dev/add-pod-name-label': 'true' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      });
      const label = await eventually(
        'the router started from the snapshot to label the pod',
        async () => {
          if (running.child.exitCode !== null) throw new Error(`exited with ${running.child.exitCode}:\n${running.output()}`);
          const pod = await client.request<{ metadata?: { labels?: Record<string, string> } }>({ path: `/api/v1/namespaces/${cluster.namespace}/pods/from-snapshot` });
          return pod.metadata?.labels?.['kubeloop.dev/pod-name'];
        },
        60_000,
      );
      expect(label).toBe('from-snapshot');
      // pino reads the pid when it loads, which for the snapshot was while it was built: the logs must carry this one.
      const started = running
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg?: string; pid?: number })
        .find((line) => line.msg === 'router started');
      expect(started?.pid, running.output()).toBe(running.child.pid);
    } finally {
      expect(await running.stop(), running.output()).toBe(0);
      await fn.close();
      await client.close();
    }
  }, 120_000);
});
