// vitest globalSetup of the e2e project: one real control plane per test run, shared by every suite
// (each suite works in its own namespace, see suite.ts), stopped at teardown.
import type { TestProject } from 'vitest/node';
import { ensureBinaries, startControlPlane, type ClusterBinaries } from '../../cli/cluster/index.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin kubeconfig of the shared control plane. */
    kubeconfig: string;
    /** https://127.0.0.1:<port> of its kube-apiserver. */
    apiServer: string;
    /** Working directory of the shared control plane (logs/ holds each component's log). */
    clusterDir: string;
    /** Absolute paths of kubectl, helm, kwok... */
    clusterBinaries: ClusterBinaries;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string): void => void process.stderr.write(`[control-plane] ${line}\n`);
  // Cheap when cached. .ci/run builds first, so a cold build never eats a test timeout silently.
  await ensureBinaries({ onProgress: log });
  const plane = await startControlPlane({ onProgress: log });
  project.provide('kubeconfig', plane.kubeconfigPath);
  project.provide('apiServer', plane.server);
  project.provide('clusterDir', plane.dir);
  project.provide('clusterBinaries', plane.binaries);
  return async () => {
    await plane.stop();
  };
}
