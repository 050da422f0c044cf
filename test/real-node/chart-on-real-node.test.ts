// The chart as users install it, on a real node (`startControlPlane({ realNode: true })`): images built by
// `kubeloop image build` and imported with pullPolicy Never, router, webhook and functions as real pods, functions
// reached only through their Services' DNS names and refused to other namespaces' pods (NetworkPolicy, enforced by
// kube-router), the webhook called by the API server through its Service, the
// router's standby taking over, helm upgrade and rollback, a second real node refused, and a teardown that leaves
// nothing on the host.
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, readFile, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../cli/cluster/index.ts';
import { packOciArchive, writeOciLayout } from '../../cli/image/oci-image.ts';
import { NODE_NET, PAUSE_IMAGE, REAL_NODE_NAME } from '../../cli/cluster/real-node/node-config.ts';
import { machineLockHolder } from '../../cli/cluster/real-node/machine-lock.ts';
import { nodeCgroupDirs, nodeProcesses } from '../../cli/cluster/real-node/node-teardown.ts';
import { vethPresent } from '../../cli/cluster/real-node/node-namespace.ts';
import { eventually } from '../cluster/eventually.ts';
import { CHART_DIR, helm } from '../e2e/chart-render.ts';
import { REPO_ROOT } from '../support/production-bundle.ts';
import { installChartOnRealNode, NAMESPACE, realNodeRunnable, RELEASE } from '../support/real-node-chart.ts';

const run = promisify(execFile);

let plane: ControlPlane;
let kc: KubeConfig;
let core: CoreV1Api;
let iptablesBefore = '';
let tunablesBefore = '';

const hostIptables = async (): Promise<string> => (await run('iptables-save')).stdout.replace(/^#.*$/gm, '').replace(/\[\d+:\d+\]/g, '');
const kernelTunables = async (): Promise<string> =>
  (await Promise.all(['vm/overcommit_memory', 'vm/panic_on_oom', 'kernel/panic', 'kernel/panic_on_oops'].map((t) => readFile(`/proc/sys/${t}`, 'utf8')))).join(',');

/** A pod that does nothing on the real node (the pause image is always there). */
function pausePod(name: string, extra: { annotations?: Record<string, string> } = {}): V1Pod {
  return {
    metadata: { name, ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: {
      containers: [{ name: 'main', image: PAUSE_IMAGE, imagePullPolicy: 'Never', securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true, runAsUser: 65535, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } } }],
    },
  };
}

beforeAll(async () => {
  if (!canRun) return;
  [iptablesBefore, tunablesBefore] = await Promise.all([hostIptables(), kernelTunables()]);
  ({ plane, kc } = await installChartOnRealNode());
  core = kc.makeApiClient(CoreV1Api);
}, 900_000);

afterAll(async () => {
  await plane?.stop();
});

const canRun = await realNodeRunnable();

describe.runIf(canRun)('the chart on a real node', () => {
  it('runs the router, the webhook and every function as Ready pods on the real node', async () => {
    const pods = (await core.listNamespacedPod({ namespace: NAMESPACE })).items;
    expect(pods.length).toBeGreaterThanOrEqual(7);
    for (const pod of pods) {
      expect(pod.spec?.nodeName, pod.metadata?.name).toBe(REAL_NODE_NAME);
      expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status, pod.metadata?.name).toBe('True');
      expect(pod.status?.podIP, pod.metadata?.name).toMatch(/^10\.251\.0\./);
    }
  });

  it('labels an annotated pod: the router calls pod-name-label through its Service DNS name', async () => {
    const loops = (await kc.makeApiClient(CustomObjectsApi).listClusterCustomObject({ group: 'kubeloop.dev', version: 'v1alpha1', plural: 'clusterloops', labelSelector: 'kubeloop.dev/function=pod-name-label' })) as {
      items: { spec: { function: { url: string } } }[];
    };
    expect(loops.items[0]?.spec.function.url).toMatch(new RegExp(`^http://[\\w-]+\\.${NAMESPACE}\\.svc[.:]`));
    await core.createNamespacedPod({ namespace: 'default', body: pausePod('labelled', { annotations: { 'kubeloop.dev/add-pod-name-label': 'true' } }) });
    const labelled = await eventually('the pod-name label', async () => (await core.readNamespacedPod({ name: 'labelled', namespace: 'default' })).metadata?.labels?.['kubeloop.dev/pod-name'], 120_000);
    expect(labelled).toBe('labelled');
  });

  it('injects the Watcher sidecar: the API server calls the webhook through its Service', async () => {
    const watcher = (await import('yaml')).parse(await readFile(join(REPO_ROOT, 'samples', 'watcher.yaml'), 'utf8')) as Record<string, unknown>;
    await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({ group: 'watch.kubeloop.dev', version: 'v1alpha1', namespace: 'default', plural: 'watchers', body: watcher });
    const pod = await eventually(
      'a pod created with the sidecar',
      async () => {
        await core.deleteNamespacedPod({ name: 'watched', namespace: 'default', gracePeriodSeconds: 0 }).catch(() => undefined);
        const created = await core.createNamespacedPod({ namespace: 'default', body: pausePod('watched', { annotations: { 'watch.kubeloop.dev/watcher': 'log-watcher' } }) });
        return created.spec?.containers.some((c) => c.name === 'log-watcher') ? created : undefined;
      },
      120_000,
    );
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(expect.arrayContaining(['main', 'log-watcher']));
  });

  it('scales a PodSet up to 2 running pods on the real node, then down to 1', async () => {
    const objects = kc.makeApiClient(CustomObjectsApi);
    const template = { metadata: { labels: { app: 'real-podset' } }, spec: pausePod('unused').spec };
    const podset = { group: 'app.kubeloop.dev', version: 'v1alpha1', namespace: 'default', plural: 'podsets' };
    await objects.createNamespacedCustomObject({ ...podset, body: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'real-podset' }, spec: { replicas: 2, template } } });
    const running = async (): Promise<V1Pod[]> =>
      (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=real-podset' })).items.filter((p) => !p.metadata?.deletionTimestamp && p.status?.phase === 'Running');
    await eventually('2 PodSet pods Running', async () => (await running()).length === 2, 120_000);
    for (const pod of await running()) expect(pod.spec?.nodeName).toBe(REAL_NODE_NAME);
    const current = (await objects.getNamespacedCustomObject({ ...podset, name: 'real-podset' })) as { spec: { replicas: number } };
    await objects.replaceNamespacedCustomObject({ ...podset, name: 'real-podset', body: { ...current, spec: { ...current.spec, replicas: 1 } } });
    await eventually('1 PodSet pod left', async () => (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=real-podset' })).items.length === 1, 120_000);
  });

  it("runs an At's command in a pod on the real node and records it DONE", async () => {
    // The At's default image, busybox:1.36, made from Debian's busybox-static (.ci/run installs it): no registry here.
    const rootfs = join(plane.dir, 'busybox-rootfs');
    await mkdir(join(rootfs, 'bin'), { recursive: true });
    await copyFile('/bin/busybox', join(rootfs, 'bin', 'busybox'));
    await chmod(join(rootfs, 'bin', 'busybox'), 0o755);
    for (const applet of ['sh', 'echo', 'date']) await symlink('busybox', join(rootfs, 'bin', applet));
    await writeOciLayout(join(plane.dir, 'busybox-oci'), { name: 'docker.io/library/busybox:1.36', layers: [rootfs], config: { Cmd: ['sh'], Env: ['PATH=/bin'] } });
    await packOciArchive(join(plane.dir, 'busybox-oci'), join(plane.dir, 'busybox.tar'));
    await plane.realNode?.importImage(join(plane.dir, 'busybox.tar'));
    const at = { group: 'cnat.kubeloop.dev', version: 'v1alpha1', namespace: 'default', plural: 'ats' };
    const objects = kc.makeApiClient(CustomObjectsApi);
    await objects.createNamespacedCustomObject({ ...at, body: { apiVersion: 'cnat.kubeloop.dev/v1alpha1', kind: 'At', metadata: { name: 'real-at' }, spec: { schedule: '2020-11-16T10:12:00Z', command: 'echo "hello world!"' } } });
    const status = await eventually(
      'the At DONE',
      async () => {
        const current = (await objects.getNamespacedCustomObject({ ...at, name: 'real-at' })) as { status?: { phase?: string; outcome?: string } };
        return current.status?.phase === 'DONE' ? current.status : undefined;
      },
      120_000,
    );
    expect(status.outcome).toBe('Succeeded');
  });

  it('keeps labelling across helm upgrade to a changed release and helm rollback', async () => {
    const kube = { KUBECONFIG: plane.kubeconfigPath };
    const labelled = async (name: string): Promise<void> => {
      await core.createNamespacedPod({ namespace: 'default', body: pausePod(name, { annotations: { 'kubeloop.dev/add-pod-name-label': 'true' } }) });
      await eventually(`${name} labelled`, async () => (await core.readNamespacedPod({ name, namespace: 'default' })).metadata?.labels?.['kubeloop.dev/pod-name'], 120_000);
    };
    const upgrade = await helm(plane.binaries.helm, ['upgrade', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--reuse-values', '--set', 'logLevel=debug', '--wait', '--timeout', '5m'], kube);
    expect(upgrade.code, upgrade.stderr).toBe(0);
    await labelled('after-upgrade');
    const rollback = await helm(plane.binaries.helm, ['rollback', RELEASE, '1', '--namespace', NAMESPACE, '--wait', '--timeout', '5m'], kube);
    expect(rollback.code, rollback.stderr).toBe(0);
    await labelled('after-rollback');
  });

  it('hands the lead over to the standby router when the leading router pod is killed', async () => {
    const leases = await kc.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: NAMESPACE });
    const lease = leases.items.find((l) => l.spec?.holderIdentity && /router/.test(l.metadata?.name ?? ''));
    expect(lease, `a router Lease among ${leases.items.map((l) => l.metadata?.name).join(', ')}`).toBeDefined();
    const leader = lease?.spec?.holderIdentity ?? '';
    const leaderPod = (await core.listNamespacedPod({ namespace: NAMESPACE })).items.find((p) => leader.startsWith(p.metadata?.name ?? '\0'));
    expect(leaderPod, `the pod holding ${leader}`).toBeDefined();
    await core.deleteNamespacedPod({ name: leaderPod?.metadata?.name ?? '', namespace: NAMESPACE, gracePeriodSeconds: 0 });
    await eventually(
      'another router pod leading',
      async () => {
        const now = await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: lease?.metadata?.name ?? '', namespace: NAMESPACE });
        return now.spec?.holderIdentity && !now.spec.holderIdentity.startsWith(leaderPod?.metadata?.name ?? '\0') ? now.spec.holderIdentity : undefined;
      },
      120_000,
    );
    await core.createNamespacedPod({ namespace: 'default', body: pausePod('after-failover', { annotations: { 'kubeloop.dev/add-pod-name-label': 'true' } }) });
    await eventually('the new leader labelling', async () => (await core.readNamespacedPod({ name: 'after-failover', namespace: 'default' })).metadata?.labels?.['kubeloop.dev/pod-name'], 120_000);
  });

  it('enforces the NetworkPolicies: a pod of another namespace cannot reach a function, though it reaches the API server', async () => {
    const loops = (await kc.makeApiClient(CustomObjectsApi).listClusterCustomObject({ group: 'kubeloop.dev', version: 'v1alpha1', plural: 'clusterloops', labelSelector: 'kubeloop.dev/function=pod-name-label' })) as {
      items: { spec: { function: { url: string } } }[];
    };
    const functionUrl = new URL(loops.items[0]?.spec.function.url ?? '');
    await core.createNamespace({ body: { metadata: { name: 'outsider' } } });
    // Exit 0 when anything answers (an HTTP status, even an error), 1 when nothing does within 5 s.
    const probe = async (name: string, url: string): Promise<string> => {
      const script = `fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(5000) }).then(() => process.exit(0), (e) => { console.error(String(e.cause ?? e)); process.exit(1); })`;
      await core.createNamespacedPod({
        namespace: 'outsider',
        body: { metadata: { name }, spec: { restartPolicy: 'Never', containers: [{ name: 'probe', image: 'ghcr.io/kubeloop/function-pod-name-label:0.1.0', imagePullPolicy: 'Never', command: ['/nodejs/bin/node', '-e', script] }] } },
      });
      return eventually(`${name} finished`, async () => {
        const phase = (await core.readNamespacedPod({ name, namespace: 'outsider' })).status?.phase;
        return phase === 'Succeeded' || phase === 'Failed' ? phase : undefined;
      }, 120_000);
    };
    // The same pod reaches the API server through its Service name (plain HTTP to its TLS port still gets an answer).
    expect(await probe('to-api-server', 'http://kubernetes.default.svc.cluster.local:443/healthz')).toBe('Succeeded');
    expect(await probe('to-function', `${functionUrl.origin}/healthz`)).toBe('Failed');
  });

  it('refuses a second real node on the machine, naming the holder pid', async () => {
    const result = await run(process.execPath, [join(REPO_ROOT, 'cli', 'bin.js'), 'cluster', 'up', '--real-node', '--dir', join(plane.dir, 'second')]).then(
      (r) => ({ code: 0, stderr: r.stderr }),
      (e: { code?: number; stderr?: string }) => ({ code: e.code, stderr: e.stderr ?? '' }),
    );
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(`another real node runs on this machine (pid ${process.pid}`);
  });

  it('tells a user who is not root in one line what is missing, exit 2', async () => {
    const result = await run('runuser', ['-u', 'nobody', '--', process.execPath, join(REPO_ROOT, 'cli', 'bin.js'), 'cluster', 'up', '--real-node', '--dir', join(tmpdir(), 'kubeloop-nobody')]).then(
      (r) => ({ code: 0, stderr: r.stderr }),
      (e: { code?: number; stderr?: string }) => ({ code: e.code, stderr: e.stderr ?? '' }),
    );
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/cannot run a real node: missing root .*run as root/);
  });

  it('uninstalls the release leaving no pod, Service or Loop behind', async () => {
    const uninstall = await helm(plane.binaries.helm, ['uninstall', RELEASE, '--namespace', NAMESPACE, '--wait', '--timeout', '3m'], { KUBECONFIG: plane.kubeconfigPath });
    expect(uninstall.code, uninstall.stderr).toBe(0);
    await eventually('no pod left', async () => (await core.listNamespacedPod({ namespace: NAMESPACE })).items.length === 0, 120_000);
    expect((await core.listNamespacedService({ namespace: NAMESPACE })).items).toEqual([]);
  });

  it('stops without leaving a process, cgroup, mount, interface, iptables rule or kernel setting changed', async () => {
    const pids = Object.values(plane.pids());
    const dir = plane.dir;
    await plane.stop();
    for (const pid of pids) expect(() => process.kill(pid, 0), `pid ${pid}`).toThrow();
    expect(nodeProcesses(undefined, undefined)).toEqual([]);
    expect(nodeCgroupDirs()).toEqual([]);
    expect((await readFile('/proc/self/mountinfo', 'utf8')).split('\n').filter((l) => l.includes(dir))).toEqual([]);
    expect(await vethPresent()).toBe(false);
    expect((await run('ip', ['-4', 'route'])).stdout).not.toContain(NODE_NET.podCidr.split('/')[0]);
    expect(await hostIptables()).toBe(iptablesBefore);
    expect(await kernelTunables()).toBe(tunablesBefore);
    expect(await machineLockHolder()).toBeUndefined();
  });
});
