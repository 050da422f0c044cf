// `kubeloop cluster build|up|down|status|kubeconfig`: the local control plane of cli/cluster for users.
// `up` runs in the foreground until Ctrl-C, or with --detach as a background supervisor whose state
// (pid, server, kubeconfig) lives in <dir>/state.json for `down`, `status` and `kubeconfig`.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { ensureBinaries, KUBERNETES_RELEASES, pidAlive, startControlPlane, VERSIONS } from '../cluster/index.ts';
import { machineLockHolder, RealNodeLockedError } from '../cluster/real-node/machine-lock.ts';
import { ensureJaeger } from '../cluster/jaeger.ts';
import { ensureKnativeWebhook } from '../cluster/knative-webhook.ts';
import { ensureNodeBinaries } from '../cluster/node-binaries.ts';
import { blockersMessage, realNodeBlockers } from '../cluster/real-node/preflight.ts';

const USAGE = `usage: kubeloop cluster <build|up|down|status|kubeconfig> [--dir DIR]

  build [--kubernetes oldest|VERSION] [--real-node] [--tracing] [--knative]
                        build or locate kube-apiserver, etcd, kwok, helm... (cached under ~/.cache/kubeloop);
                        --kubernetes oldest: the oldest supported API server (${KUBERNETES_RELEASES.oldest}), which the
                        compatibility e2e runs against; --real-node: also containerd, kubelet, kube-proxy, CoreDNS;
                        --tracing: also Jaeger (kubeloop dev --tracing); --knative: also Knative Serving's webhook
                        (the chart's Knative e2e)
  up [--nodes N] [--detach] [--real-node]
                        start etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok;
                        foreground until Ctrl-C unless --detach; --real-node: also one real node (containerd,
                        kubelet, kube-proxy, CoreDNS in their own network namespace; root, runc and the CNI
                        plugins needed; one per machine), the kwok nodes then tainted
  down                  stop a detached control plane
  status                is it running, and where
  kubeconfig            print the admin kubeconfig path (export KUBECONFIG=$(kubeloop cluster kubeconfig))

  --dir DIR             state directory (default ~/.kubeloop/cluster)

environment: KUBELOOP_K8S_BIN or KUBEBUILDER_ASSETS = directory of prebuilt binaries;
             KUBELOOP_CACHE_DIR = binary cache (default ~/.cache/kubeloop);
             KUBELOOP_KUBERNETES_VERSION = run another Kubernetes version (e.g. ${KUBERNETES_RELEASES.oldest}) everywhere
versions: Kubernetes ${VERSIONS.kubernetes}, etcd ${VERSIONS.etcd}, kwok ${VERSIONS.kwok}, helm ${VERSIONS.helm}`;

interface State {
  pid: number;
  server: string;
  kubeconfig: string;
  startedAt: string;
}

const progress = (line: string): void => void process.stderr.write(`${line}\n`);

async function readState(dir: string): Promise<State | undefined> {
  try {
    const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as State;
    return pidAlive(state.pid) ? state : undefined;
  } catch {
    return undefined;
  }
}

/** What `build` makes besides the control plane; each is cached, so asking again costs nothing. */
interface BuildExtras {
  realNode: boolean;
  tracing: boolean;
  knative: boolean;
}

async function build(kubernetes: string | undefined, extras: BuildExtras): Promise<number> {
  const started = Date.now();
  const version = kubernetes === 'oldest' ? KUBERNETES_RELEASES.oldest : kubernetes;
  if (version !== undefined && !/^v1\.\d+\.\d+$/.test(version)) {
    console.error(`kubeloop: --kubernetes must be "oldest" or a version like ${KUBERNETES_RELEASES.current}, got "${version}"`);
    return 2;
  }
  const binaries = await ensureBinaries({ onProgress: progress, ...(version ? { kubernetesVersion: version } : {}) });
  const nodeBinaries = extras.realNode ? await ensureNodeBinaries({ onProgress: progress, ...(version ? { kubernetesVersion: version } : {}) }) : {};
  const jaeger = extras.tracing ? { jaeger: await ensureJaeger(progress) } : {};
  const knative = extras.knative ? { knativeWebhook: await ensureKnativeWebhook(progress) } : {};
  for (const [name, path] of Object.entries({ ...binaries, ...nodeBinaries, ...jaeger, ...knative })) console.log(`${name.padEnd(22)} ${path}`);
  progress(`binaries ready (${((Date.now() - started) / 1000).toFixed(1)}s)`);
  return 0;
}

/** Refuses a real node this machine cannot run, or one another process already runs: one line, exit 2. */
async function realNodeRefusal(): Promise<string | undefined> {
  const blockers = await realNodeBlockers();
  if (blockers.length > 0) return blockersMessage(blockers);
  const holder = await machineLockHolder();
  return holder === undefined ? undefined : `kubeloop: ${new RealNodeLockedError(holder).message}`;
}

async function upForeground(dir: string, nodes: number, realNode: boolean): Promise<number> {
  const running = await readState(dir);
  if (running) {
    console.error(`kubeloop: a control plane already runs from ${dir} (pid ${running.pid}); "kubeloop cluster down --dir ${dir}" stops it`);
    return 1;
  }
  const refusal = realNode ? await realNodeRefusal() : undefined;
  if (refusal) {
    console.error(refusal);
    return 2;
  }
  await mkdir(dir, { recursive: true });
  const plane = await startControlPlane({ dir, nodes, onProgress: progress, realNode });
  const state: State = { pid: process.pid, server: plane.server, kubeconfig: plane.kubeconfigPath, startedAt: new Date().toISOString() };
  await writeFile(join(dir, 'state.json'), JSON.stringify(state, null, 2));
  console.log(`control plane up: ${plane.server}\nexport KUBECONFIG=${plane.kubeconfigPath}\nlogs: ${join(dir, 'logs')}`);
  await new Promise<void>((done) => {
    const stop = (): void => done();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    process.once('SIGHUP', stop);
  });
  progress('stopping the control plane');
  await plane.stop();
  await rm(join(dir, 'state.json'), { force: true });
  return 0;
}

async function upDetached(dir: string, nodes: number, realNode: boolean): Promise<number> {
  await mkdir(dir, { recursive: true });
  const running = await readState(dir);
  if (running) {
    console.log(`already running (pid ${running.pid}): ${running.server}\nexport KUBECONFIG=${running.kubeconfig}`);
    return 0;
  }
  const refusal = realNode ? await realNodeRefusal() : undefined;
  if (refusal) {
    console.error(refusal);
    return 2;
  }
  await rm(join(dir, 'state.json'), { force: true });
  const logPath = join(dir, 'up.log');
  const fd = openSync(logPath, 'w');
  const script = process.argv[1] as string;
  const child = spawn(process.execPath, [...process.execArgv, script, 'cluster', 'up', '--dir', dir, '--nodes', String(nodes), ...(realNode ? ['--real-node'] : [])], {
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  child.unref();
  progress(`starting in the background (pid ${child.pid}), log ${logPath}`);
  let exited = false;
  child.on('exit', () => (exited = true));
  // Cold builds can take many minutes; the log shows their progress.
  for (;;) {
    const state = await readState(dir);
    if (state && state.pid === child.pid) {
      console.log(`control plane up: ${state.server}\nexport KUBECONFIG=${state.kubeconfig}`);
      return 0;
    }
    if (exited) {
      console.error(`kubeloop: the control plane did not start:\n${(await readFile(logPath, 'utf8')).split('\n').slice(-30).join('\n')}`);
      return 1;
    }
    await sleep(250);
  }
}

async function down(dir: string): Promise<number> {
  const state = await readState(dir);
  if (!state) {
    console.log(`no control plane running from ${dir}`);
    return 0;
  }
  process.kill(state.pid, 'SIGTERM');
  const deadline = Date.now() + 60_000;
  while (pidAlive(state.pid) && Date.now() < deadline) await sleep(200);
  if (pidAlive(state.pid)) {
    console.error(`kubeloop: pid ${state.pid} still running after 60s`);
    return 1;
  }
  console.log('control plane stopped');
  return 0;
}

async function status(dir: string): Promise<number> {
  const state = await readState(dir);
  if (!state) {
    console.log(`not running (dir ${dir})`);
    return 1;
  }
  const kc = new KubeConfig();
  kc.loadFromFile(state.kubeconfig);
  try {
    const nodes = await kc.makeApiClient(CoreV1Api).listNode();
    const ready = nodes.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    console.log(`running (pid ${state.pid}) since ${state.startedAt}\nserver ${state.server}\nnodes ${ready}/${nodes.items.length} Ready\nkubeconfig ${state.kubeconfig}`);
    return 0;
  } catch (error) {
    console.log(`supervisor running (pid ${state.pid}) but the API server does not answer: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      dir: { type: 'string' },
      nodes: { type: 'string', default: '2' },
      detach: { type: 'boolean', default: false },
      'real-node': { type: 'boolean', default: false },
      tracing: { type: 'boolean', default: false },
      knative: { type: 'boolean', default: false },
      kubernetes: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [sub] = positionals;
  if (values.help || !sub) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const dir = resolve(values.dir ?? join(homedir(), '.kubeloop', 'cluster'));
  const nodes = Number(values.nodes);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 100) {
    console.error(`kubeloop: --nodes must be an integer from 1 to 100, got "${values.nodes}"`);
    return 2;
  }
  switch (sub) {
    case 'build':
      return build(values.kubernetes, { realNode: values['real-node'], tracing: values.tracing, knative: values.knative });
    case 'up':
      return values.detach ? upDetached(dir, nodes, values['real-node']) : upForeground(dir, nodes, values['real-node']);
    case 'down':
      return down(dir);
    case 'status':
      return status(dir);
    case 'kubeconfig': {
      const state = await readState(dir);
      if (!state) {
        console.error(`kubeloop: no control plane running from ${dir}; start one with "kubeloop cluster up --detach"`);
        return 1;
      }
      console.log(state.kubeconfig);
      return 0;
    }
    default:
      console.error(`kubeloop: unknown cluster subcommand "${sub}"\n\n${USAGE}`);
      return 2;
  }
}
