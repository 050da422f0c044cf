// Sharded routers on the oldest supported API server (docs/control-plane.md), started by this suite and
// built on first use into its own cache dir: it ignores shardSelector, so members filter their share
// themselves; the same scenarios as on the current control plane (sharding-scenarios.ts).
import { KUBERNETES_RELEASES, startControlPlane } from '../../cli/cluster/index.ts';
import { shardingScenarios } from './sharding-scenarios.ts';

shardingScenarios({
  suite: 'router-sharding-oldest',
  mode: 'client',
  plane: async () => {
    const plane = await startControlPlane({ nodes: 1, kubernetesVersion: KUBERNETES_RELEASES.oldest, onProgress: (line) => process.stderr.write(`[control-plane ${KUBERNETES_RELEASES.oldest}] ${line}\n`) });
    return { kubeconfigPath: plane.kubeconfigPath, server: plane.server, binaries: plane.binaries, dir: plane.dir, stop: () => plane.stop() };
  },
});
