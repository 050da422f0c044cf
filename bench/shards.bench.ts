// npm run bench:shards, on a private local control plane: one ConfigMap Loop over BENCH_SHARD_OBJECTS
// (10,000) objects, run first by a single router, then by three `--sharding` members that the API server
// sends only their share (server-side sharded list and watch), then by three members that receive
// everything and filter themselves (--sharding-server-side=false), in the same run. Per process: CPU
// seconds (from /proc) to take up and reconcile every object once (start) and to reconcile one change of
// every object (updates), peak RSS (VmHWM), calls; the members' shares of the single router's figures;
// and the takeover time after one server-side member is killed with SIGKILL. Every router runs as the image
// runs it: the production bundle (dist/bundle) with the router image's NODE_OPTIONS; BENCH_FROM_SOURCE=1 runs
// the sources through tsx instead. BENCH_CPU_PROF=<dir>: each router writes a V8 CPU profile there on exit
// (from the bundle's dist/ rather than dist/bundle, so that profiles keep the folders; npm run bench:profile).
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { startControlPlane, VERSIONS } from '../cli/cluster/index.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { shardSlot } from '../lib/kube/shard-selector.ts';
import { MemberSet } from '../router/index.ts';
import { inlineLoop } from '../test/support/router-harness.ts';
import { buildProductionBundle, dockerfileTargets } from '../test/support/production-bundle.ts';
import { agreed, serveRecordingFunction, startMemberProcess, type MemberProcessOptions, type RecordingFunction } from '../test/support/shard-kit.ts';
import { readProcess } from './process-figures.ts';
import { createNamespace, MiB, pool, until } from './router-bench-kit.ts';

const OBJECTS = Number(process.env.BENCH_SHARD_OBJECTS ?? 10_000);
const LEASE_SECONDS = Number(process.env.BENCH_SHARD_LEASE_SECONDS ?? 15);
const MEMBERS = ['s1', 's2', 's3'];
/** The client-side baseline: members that receive every object. */
const CLIENT_MEMBERS = ['c1', 'c2', 'c3'];
const NAMESPACE = 'bench-shards';
const GROUP = 'bench-shards';
const LOOP = 'configmaps';
const FROM_SOURCE = process.env.BENCH_FROM_SOURCE === '1';
const PROFILE_DIR = process.env.BENCH_CPU_PROF;

/** How each router process is started: the production bundle with the router image's environment, or tsx. */
async function routerCommand(dir: string): Promise<(identity: string) => MemberProcessOptions['command']> {
  const profile = (identity: string) => (PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE_DIR, identity)}`] : []);
  if (FROM_SOURCE) return (identity) => ({ execArgv: profile(identity), script: 'cli/bin.js', env: { KUBELOOP_FROM_SOURCE: '1' } });
  process.stderr.write('building the production bundle\n');
  await buildProductionBundle(dir);
  const env = (await dockerfileTargets()).find((t) => t.target === 'router')?.env ?? {};
  delete process.env.KUBELOOP_FROM_SOURCE;
  return (identity) => ({ execArgv: profile(identity), script: join(dir, 'cli', 'bin.js'), env: PROFILE_DIR ? { ...env, KUBELOOP_NO_BUNDLE: '1' } : env });
}

interface Row {
  name: string;
  /** Function calls this process made in the updates phase (one per change it owns, plus any takeover RESYNCs). */
  calls: number;
  /** CPU seconds to take up and reconcile every object once. */
  startCpu: number;
  updatesCpu: number;
  /** Context switches of the main thread in the updates phase. */
  updatesSwitches: number;
  /** The peak resident set (VmHWM), not the moment's: garbage-collection timing does not move it. */
  rssMiB: number;
}

const current = new Map<string, string>();
const uids = new Map<string, string>();
const names = Array.from({ length: OBJECTS }, (_, i) => `cm-${String(i).padStart(5, '0')}`);

async function write(client: KubeClient, which: string[], version: number): Promise<void> {
  await pool(0, which.length, 32, async (i) => {
    const name = which[i]!;
    const body = { metadata: { name, namespace: NAMESPACE }, data: { version: String(version) } };
    const cm = version === 0
      ? await client.request<V1ConfigMap>({ method: 'POST', path: `/api/v1/namespaces/${NAMESPACE}/configmaps`, body })
      : await client.request<V1ConfigMap>({ method: 'PUT', path: `/api/v1/namespaces/${NAMESPACE}/configmaps/${name}`, body });
    current.set(`${NAMESPACE}/${name}`, cm.metadata?.resourceVersion ?? '');
    uids.set(name, cm.metadata?.uid ?? '');
  });
}

/** Resolves with the seconds since `since` once every listed object's current version was called for. */
async function converged(recorder: RecordingFunction, since: number, which: string[] = names): Promise<number> {
  await until('every change reconciled', 600_000, async () => {
    const called = new Set(recorder.calls.filter((c) => c.at >= since).map((c) => `${c.key}@${c.resourceVersion}`));
    return which.every((n) => called.has(`${NAMESPACE}/${n}@${current.get(`${NAMESPACE}/${n}`)}`));
  }, 100);
  return (Math.max(...recorder.calls.filter((c) => c.at >= since).map((c) => c.at)) - since) / 1000;
}

async function main(): Promise<void> {
  const plane = await startControlPlane({ nodes: 1, onProgress: (line) => process.stderr.write(`[control-plane] ${line}\n`) });
  const client = await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: { qps: 2000, burst: 2000 } });
  const recorder = await serveRecordingFunction(0);
  const dir = mkdtempSync(join(tmpdir(), 'bench-shards-'));
  const bundleDir = mkdtempSync(join(tmpdir(), 'bench-shards-bundle-'));
  const command = await routerCommand(bundleDir);
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const children: ChildProcess[] = [];
  const start = (identity: string, sharding: boolean, serverSide = true) => {
    const loops = [inlineLoop(LOOP, NAMESPACE, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, function: { url: recorder.url(identity) } })];
    const group = serverSide ? GROUP : `${GROUP}-client`;
    const child = startMemberProcess({ identity, kubeconfig: plane.kubeconfigPath, dir, loops, leaseNamespace: NAMESPACE, group, leaseDurationSeconds: LEASE_SECONDS, sharding, command: command(identity), ...(serverSide ? {} : { extraArgs: ['--sharding-server-side=false'] }) });
    children.push(child);
    return child;
  };
  const stopped = (child: ChildProcess) => new Promise((resolve) => child.once('exit', resolve));
  try {
    await createNamespace(client, NAMESPACE);
    process.stderr.write(`creating ${OBJECTS} ConfigMaps\n`);
    await write(client, names, 0);

    // One router: the baseline.
    let since = Date.now();
    const single = start('single', false);
    const singleStartTime = await converged(recorder, since);
    const singleStart = readProcess(single.pid!);
    since = Date.now();
    await write(client, names, 1);
    const singleUpdateTime = await converged(recorder, since);
    const singleEnd = readProcess(single.pid!);
    const callsBy = (member: string, from: number) => recorder.calls.filter((c) => c.member === member && c.at >= from).length;
    const rows: Row[] = [{ name: 'single router', calls: callsBy('single', since), startCpu: singleStart.cpuMs / 1000, updatesCpu: (singleEnd.cpuMs - singleStart.cpuMs) / 1000, updatesSwitches: singleEnd.switches - singleStart.switches, rssMiB: singleEnd.peakRss / MiB }];
    single.kill('SIGTERM');
    await stopped(single);

    // Three members: started together, they agree on a view, take over their shares and reconcile them.
    let version = 2;
    const runMembers = async (ids: string[], serverSide: boolean) => {
      const from = Date.now();
      const members = new Map(ids.map((id) => [id, start(id, true, serverSide)]));
      const startTime = await converged(recorder, from);
      await until('three members agree', 120_000, () => agreed(client, NAMESPACE, serverSide ? GROUP : `${GROUP}-client`, ids));
      const memberStart = new Map(ids.map((id) => [id, readProcess(members.get(id)!.pid!)]));
      const updatesFrom = Date.now();
      await write(client, names, version++);
      const updateTime = await converged(recorder, updatesFrom);
      for (const id of ids) {
        const end = readProcess(members.get(id)!.pid!);
        const begin = memberStart.get(id)!;
        rows.push({ name: `${serverSide ? 'server' : 'client'} ${id}`, calls: callsBy(id, updatesFrom), startCpu: begin.cpuMs / 1000, updatesCpu: (end.cpuMs - begin.cpuMs) / 1000, updatesSwitches: end.switches - begin.switches, rssMiB: end.peakRss / MiB });
      }
      return { members, startTime, updateTime };
    };
    const { members, startTime: shardStartTime, updateTime: shardUpdateTime } = await runMembers(MEMBERS, true);

    // Takeover: kill s2 and change every object it owned at once.
    const view = new MemberSet(MEMBERS);
    const orphaned = names.filter((n) => view.owner(shardSlot(uids.get(n) ?? '')) === 's2');
    members.get('s2')!.kill('SIGKILL');
    const killedAt = Date.now();
    await write(client, orphaned, version++);
    const takeover = await converged(recorder, killedAt, orphaned);
    const firstTakeover = Math.min(...recorder.calls.filter((c) => c.at >= killedAt && c.member !== 's2' && orphaned.includes(c.key.slice(NAMESPACE.length + 1))).map((c) => c.at));
    for (const id of ['s1', 's3']) members.get(id)!.kill('SIGTERM');
    await Promise.all(['s1', 's3'].map((id) => stopped(members.get(id)!)));

    // The client-side baseline: every member receives every object and filters its share itself.
    const clientRun = await runMembers(CLIENT_MEMBERS, false);
    // Stopped cleanly, as the others were: a router killed with SIGKILL writes no CPU profile.
    for (const child of clientRun.members.values()) child.kill('SIGTERM');
    await Promise.all([...clientRun.members.values()].map(stopped));

    const base = rows[0]!;
    const pad = (s: string | number, n: number) => String(s).padStart(n);
    console.log(`\nbench:shards  Kubernetes ${VERSIONS.kubernetes}, ${OBJECTS} ConfigMaps, one Loop, function answering at once over HTTP; lease ${LEASE_SECONDS} s; routers ${FROM_SOURCE ? 'from source (tsx)' : 'from the production bundle with the router image\'s NODE_OPTIONS'}`);
    console.log(`${'process'.padEnd(16)}${pad('start CPU s', 13)}${pad('share', 8)}${pad('updates CPU s', 15)}${pad('share', 8)}${pad('peak RSS MiB', 14)}${pad('share', 8)}${pad('update calls', 14)}${pad('CPU ms/call', 13)}${pad('switches/call', 15)}`);
    for (const r of rows) {
      const share = (x: number, y: number) => (r === base ? '' : (x / y).toFixed(2));
      console.log(
        `${r.name.padEnd(16)}${pad(r.startCpu.toFixed(2), 13)}${pad(share(r.startCpu, base.startCpu), 8)}${pad(r.updatesCpu.toFixed(2), 15)}${pad(share(r.updatesCpu, base.updatesCpu), 8)}${pad((r.rssMiB).toFixed(0), 14)}${pad(share(r.rssMiB, base.rssMiB), 8)}${pad(r.calls, 14)}${pad(((r.updatesCpu * 1000) / Math.max(1, r.calls)).toFixed(2), 13)}${pad((r.updatesSwitches / Math.max(1, r.calls)).toFixed(1), 15)}`,
      );
    }
    for (const [mode, prefix] of [['server-side', 'server '], ['client-side', 'client ']] as const) {
      const group = rows.filter((r) => r.name.startsWith(prefix));
      const busiest = (f: (r: Row) => number) => Math.max(...group.map((r) => f(r) / f(base))).toFixed(2);
      console.log(`${mode}: busiest member ${busiest((r) => r.startCpu)} of the single router's start CPU, ${busiest((r) => r.updatesCpu)} of its update CPU (goal <= 0.40), ${busiest((r) => r.rssMiB)} of its peak RSS (goal <= 0.5)`);
    }
    console.log(`converge ${OBJECTS}: single router start ${singleStartTime.toFixed(1)} s, updates ${singleUpdateTime.toFixed(1)} s; server-side members start ${shardStartTime.toFixed(1)} s, updates ${shardUpdateTime.toFixed(1)} s; client-side members start ${clientRun.startTime.toFixed(1)} s, updates ${clientRun.updateTime.toFixed(1)} s (wall clock on a shared 2-core machine: not a speed-up figure)`);
    // Each re-adoption after a fence (a renewal missed under load) queues the member's whole share again.
    const logged = (id: string, text: string) => readFileSync(join(dir, `${id}.log`), 'utf8').split(text).length - 1;
    console.log(`members: ${[...MEMBERS, ...CLIENT_MEMBERS].map((id) => `${id} adopted ${logged(id, 'shard view adopted')} views, fenced ${logged(id, 'not renewed within the deadline')} times`).join('; ')}`);
    console.log(`takeover: ${orphaned.length} keys of the killed member, first reconciled by a survivor ${((firstTakeover - killedAt) / 1000).toFixed(1)} s after the kill, all ${takeover.toFixed(1)} s after (lease ${LEASE_SECONDS} s)`);
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await recorder.close();
    await client.close();
    await plane.stop();
    rmSync(bundleDir, { recursive: true, force: true });
  }
}

await main();
