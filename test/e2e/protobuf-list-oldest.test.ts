// Metadata-only lists in protobuf on the oldest supported API server (docs/control-plane.md), started by this suite
// and built on first use into its own cache dir: the first fill of a server without WatchList is such a list.
import { KUBERNETES_RELEASES, startControlPlane } from '../../cli/cluster/index.ts';
import { protobufListScenarios } from './protobuf-list-scenarios.ts';

protobufListScenarios({
  suite: 'protobuf-list-oldest',
  plane: async () => {
    const plane = await startControlPlane({ nodes: 1, kubernetesVersion: KUBERNETES_RELEASES.oldest, onProgress: (line) => process.stderr.write(`[control-plane ${KUBERNETES_RELEASES.oldest}] ${line}\n`) });
    return { kubeconfigPath: plane.kubeconfigPath, server: plane.server, binaries: plane.binaries, dir: plane.dir, stop: () => plane.stop() };
  },
});
