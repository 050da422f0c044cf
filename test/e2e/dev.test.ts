// `kubeloop dev` (npm start) as a user runs it: it starts its own control plane and the platform, prints
// three kubectl commands and a kubeloop history one; we run exactly those (the real kubectl, this checkout's
// kubeloop) and check their effect, then Ctrl+C must stop everything, leaving no process behind.
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pidAlive } from '../../cli/cluster/pid-alive.ts';
import { eventually } from '../cluster/eventually.ts';
import { startDev, stopDev } from './dev-process.ts';
import { REPO_ROOT } from '../support/production-bundle.ts';

const run = promisify(execFile);

let dev: ChildProcess;
let output = '';
let exited: Promise<number | string>;
let workDir = '';
let kubeconfig = '';
const kubectl = inject('clusterBinaries').kubectl;

async function kube(args: string[]): Promise<string> {
  const { stdout } = await run(kubectl, ['--kubeconfig', kubeconfig, ...args]);
  return stdout;
}

/** The commands dev printed under "Try:", by number. */
function printedCommands(): string[] {
  const lines = output.split('\n');
  return lines.flatMap((line, i) => (/^\s+# \d\. /.test(line) ? [(lines[i + 1] ?? '').trim()] : []));
}

/** Runs a printed command in a shell with the real kubectl first on PATH and dev's kubeconfig exported. */
async function runPrinted(command: string): Promise<string> {
  const { stdout } = await run('sh', ['-c', command], {
    env: { ...process.env, KUBECONFIG: kubeconfig, PATH: `${dirname(kubectl)}:${process.env.PATH ?? ''}` },
  });
  return stdout;
}

/** Processes whose command line mentions a path (the control plane's state dir, dev's log dir). */
async function processesMentioning(path: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(path)) found.push(`${pid}: ${cmdline.replace(/\0/g, ' ').slice(0, 160)}`);
  }
  return found;
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'kubeloop-dev-test-'));
  const started = await startDev(['--dir', workDir, '--status-interval-seconds', '1'], { cwd: REPO_ROOT, onOutput: (text) => (output += text) });
  dev = started.child;
  exited = started.exited;
  kubeconfig = started.kubeconfig;
}, 300_000);

afterAll(async () => {
  if (dev) await stopDev({ child: dev, exited, kubeconfig });
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('kubeloop dev', () => {
  it('prints what it started, the kubeconfig and four commands to try, with no escape codes when not on a terminal', () => {
    for (const name of ['router', 'webhook', 'function-pod-name-label', 'function-podset', 'function-watcher', 'function-at', 'function-watcher-sidecar']) {
      expect(output).toMatch(new RegExp(`^  ${name}\\s+https?://127\\.0\\.0\\.1:\\d+  pid \\d+`, 'm'));
    }
    expect(printedCommands()).toHaveLength(4);
    expect(output).toMatch(/^ {2}history API \(kubeloop history\)\s+https:\/\/127\.0\.0\.1:\d+, registered as APIService v1alpha1\.history\.kubeloop\.dev/m);
    expect(output).not.toContain('\x1b');
  });

  it('command 1 labels the sample PodSet pods with their names', async () => {
    await eventually('the sample PodSet to have 3 pods', async () => (await kube(['get', 'pods', '-l', 'app=podset-sample', '-o', 'name'])).trim().split('\n').filter(Boolean).length === 3, 60_000);
    await runPrinted(printedCommands()[0] ?? '');
    await eventually('every podset-sample pod to carry kubeloop.dev/pod-name = its name', async () => {
      const lines = (await kube(['get', 'pods', '-l', 'app=podset-sample', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.metadata.labels.kubeloop\\.dev/pod-name}{"\\n"}{end}'])).trim().split('\n');
      return lines.length >= 3 && lines.every((l) => l.split('=')[0] === l.split('=')[1]);
    }, 60_000);
  });

  it('command 2 scales the PodSet to 5 pods and its status follows', async () => {
    await runPrinted(printedCommands()[1] ?? '');
    await eventually('5 pods and availableReplicas 5', async () => {
      const pods = (await kube(['get', 'pods', '-l', 'app=podset-sample', '-o', 'name'])).trim().split('\n').filter(Boolean);
      const available = (await kube(['get', 'podset', 'podset-sample', '-o', 'jsonpath={.status.availableReplicas}'])).trim();
      return pods.length === 5 && available === '5';
    }, 60_000);
  });

  it('command 4 shows the PodSet\'s reconciles through the API server (dev registered the history API)', async () => {
    // As printed, with the kubeloop of this checkout for `npx kubeloop`.
    const command = (printedCommands()[3] ?? '').replace(/^npx kubeloop /, `KUBELOOP_FROM_SOURCE=1 node ${join(REPO_ROOT, 'cli/bin.js')} `);
    expect(command).toContain('history --cluster-loop podset -n default podset-sample');
    const shown = await eventually('the PodSet\'s history', async () => {
      const text = await runPrinted(command);
      return /\d+ reconciles?, oldest first/.test(text) && text;
    });
    expect(shown).toContain('PodSet default/podset-sample, Loop podset');
    // Its pods' changes trigger it as much as its own (the newest 10 are kept): some watch event did.
    expect(shown).toMatch(/trigger {3}(primary|child) (ADDED|MODIFIED|DELETED) \S+ default\/podset-sample/);
  });

  it('command 3 schedules an At that runs its pod and ends DONE', async () => {
    await runPrinted(printedCommands()[2] ?? '');
    await eventually('the At to be DONE', async () => (await kube(['get', 'at', 'at-demo', '-o', 'jsonpath={.status.phase}'])).trim() === 'DONE', 90_000);
    expect((await kube(['get', 'pod', 'at-demo', '-o', 'name'])).trim()).toBe('pod/at-demo');
  });

  it('runs the webhook: a pod naming the sample Watcher gets its sidecar', async () => {
    await kube(['run', 'watched', '--image=busybox:1.36', '--restart=Never', '--annotations=watch.kubeloop.dev/watcher=log-watcher', '--', 'sleep', '3600']);
    const containers = await kube(['get', 'pod', 'watched', '-o', 'jsonpath={.spec.containers[*].name}']);
    expect(containers.split(' ')).toEqual(['watched', 'log-watcher']);
  });

  it('signs every call: each Loop names its own whsec_ key, only its ServiceAccount may read it, and a function refuses an unsigned request', async () => {
    const loops = ['at', 'pod-name-label', 'podset', 'watcher'];
    for (const loop of loops) {
      const ref = JSON.parse(await kube(['get', 'clusterloop', loop, '-o', 'jsonpath={.spec.function.signingSecretRef}'])) as { name: string; namespace: string; key: string };
      expect(ref).toEqual({ name: `kubeloop-dev-${loop}-signing`, namespace: 'kubeloop-system', key: 'secret' });
      const value = Buffer.from(await kube(['-n', ref.namespace, 'get', 'secret', ref.name, '-o', 'jsonpath={.data.secret}']), 'base64').toString('utf8');
      expect(Buffer.from(value.replace(/^whsec_/, ''), 'base64')).toHaveLength(32);
      const canGet = (account: string) => kube(['auth', 'can-i', 'get', `secret/${ref.name}`, '-n', ref.namespace, `--as=system:serviceaccount:kubeloop-system:${account}`]).then((out) => out.trim(), () => 'no');
      expect(await canGet(`kubeloop-loop-${loop}`)).toBe('yes');
      for (const other of loops.filter((l) => l !== loop)) expect(await canGet(`kubeloop-loop-${other}`), `kubeloop-loop-${other} reads ${ref.name}`).toBe('no');
    }
    const podset = /^ {2}function-podset\s+(http:\/\/127\.0\.0\.1:\d+)/m.exec(output)?.[1];
    const reply = await fetch(`${podset}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(reply.status).toBe(401);
    expect(await reply.text()).toContain('InvalidSignature');
  });

  it('shows a live status of the Loops with their reconciles', async () => {
    await eventually('a status line for the podset Loop with reconciles', async () => /\[status \S+\] loop=podset ready=True queue=\d+ inFlight=\d+ reconciles=[1-9]/.test(output), 30_000);
  });

  it('serves the console it printed: the podset Loop Ready with its figures, a reconcile traced into the console itself, and the sample hook\'s admissions', async () => {
    const url = /^ {2}console\s+(http:\/\/127\.0\.0\.1:\d+)/m.exec(output)?.[1];
    expect(url, output.slice(-3000)).toBeDefined();
    type Row = { id: string; ready?: { status: string }; metrics?: { reconciles: number } };
    await eventually('the podset Loop Ready, with reconciles, in the console', async () => {
      const { rows } = (await (await fetch(`${url}/api/overview`)).json()) as { rows: Row[] };
      const row = rows.find((r) => r.id === 'podset');
      return row?.ready?.status === 'True' && (row.metrics?.reconciles ?? 0) > 0;
    });
    // Without --tracing, the router exports its spans to the console: a history entry's trace is there.
    type Timeline = { timeline?: { entries: Array<{ traceId?: string }> } };
    const traceId = await eventually('a traced reconcile of the sample PodSet', async () => {
      const { timeline } = (await (await fetch(`${url}/api/history?loop=podset&namespace=default&name=podset-sample`)).json()) as Timeline;
      return timeline?.entries.find((e) => e.traceId)?.traceId;
    });
    await eventually('its trace in the console', async () => {
      const reply = await fetch(`${url}/api/traces/${traceId}`);
      return reply.ok && ((await reply.json()) as { spans: Array<{ name: string }> }).spans.some((s) => s.name === 'reconcile podset');
    });
    // The gateway's admission history, which dev registers as it does the router's history API: the sidecar injected into the watched pod.
    type Hook = { history?: { entries: Array<{ operation: string; name?: string; outcome: string }> }; historyUnavailable?: { message: string } };
    await eventually('the watched pod\'s admission in the console', async () => {
      const answer = (await (await fetch(`${url}/api/hook?id=watcher-sidecar`)).json()) as Hook;
      return answer.history?.entries.some((e) => e.operation === 'CREATE' && e.name === 'watched' && e.outcome === 'patched');
    });
  });

  it('stops everything on Ctrl+C and leaves no process behind', async () => {
    const pids = [...output.matchAll(/ pid (\d+) /g)].map((m) => Number(m[1]));
    const stateDir = /\(state in (\S+)\)/.exec(output)?.[1] ?? '';
    expect(pids.length).toBe(7);
    expect(stateDir).not.toBe('');
    expect((await processesMentioning(stateDir)).length).toBeGreaterThan(0);
    dev.kill('SIGINT');
    expect(await exited, output.slice(-2000)).toBe(0);
    expect(output).toContain('stopped cleanly');
    expect(pids.filter(pidAlive)).toEqual([]);
    expect(await processesMentioning(stateDir)).toEqual([]);
    expect(await processesMentioning(workDir)).toEqual([]);
  }, 90_000);
});
