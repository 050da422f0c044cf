// What the benches that go through a real API server share: a private control plane with the given CRDs
// established, kubectl and a KubeClient on it, and processes spawned until they print their URL, all
// stopped by `close`.
import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { chartCrdFile } from '../cli/chart-crds.ts';
import { startControlPlane, type ControlPlane } from '../cli/cluster/index.ts';
import { waitForCrdsEstablished } from '../cli/dev/apply-manifests.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { spawnUntilUrl, urlLine, type BuiltNode, type SpawnedServer } from './autocannon-kit.ts';

export interface BenchPlane {
  plane: ControlPlane;
  client: KubeClient;
  kubectl: (...args: string[]) => Promise<{ stdout: string; stderr: string }>;
  /**
   * Spawns `args` under node through tsx in the package root (or, given `built`, with its node flags in its folder)
   * and resolves once `match` finds its URL in a log line.
   */
  spawn: (args: string[], match?: (line: string) => string | undefined, built?: { node: BuiltNode; cwd: string }) => Promise<SpawnedServer>;
  close: () => Promise<void>;
}

/** Starts the plane and installs the chart CRDs named (e.g. "clusteradmissionhooks.kubeloop.dev"). */
export async function startBenchPlane(root: string, crds: readonly string[]): Promise<BenchPlane> {
  const plane = await startControlPlane({ onProgress: (line) => process.stderr.write(`[control-plane] ${line}\n`) });
  const run = promisify(execFile);
  const kubectl = (...args: string[]) => run(plane.binaries.kubectl, ['--kubeconfig', plane.kubeconfigPath, ...args], { maxBuffer: 256 * 1024 * 1024 });
  const client = await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: { qps: 1000, burst: 1000 } });
  const children: ChildProcess[] = [];
  const close = async () => {
    for (const child of children) child.kill();
    await client.close();
    await plane.stop();
  };
  try {
    for (const crd of crds) {
      await kubectl('apply', '--server-side', '-f', chartCrdFile(`${crd}.yaml`, root));
      await waitForCrdsEstablished(client, [crd], 60_000);
    }
  } catch (error) {
    await close();
    throw error;
  }
  const spawn = async (args: string[], match: (line: string) => string | undefined = urlLine, built?: { node: BuiltNode; cwd: string }): Promise<SpawnedServer> => {
    const started = await spawnUntilUrl(args, { match, cwd: built?.cwd ?? root, ...(built ? { built: built.node } : {}) });
    children.push(started.child);
    return started;
  };
  return { plane, client, kubectl, spawn, close };
}
