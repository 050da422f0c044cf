// The real node's generated configuration keeps its state under the node's directory.
import { describe, expect, it } from 'vitest';
import { cniConfig, nodePaths } from './node-config.ts';

describe('cniConfig', () => {
  it("records the pods' addresses under the node's directory, not host-wide where a torn-down node's addresses would stay taken", () => {
    const paths = nodePaths('/tmp/kubeloop-node-x');
    const bridge = (JSON.parse(cniConfig(paths)) as { plugins: Array<{ type: string; ipam?: { type: string; dataDir?: string } }> }).plugins.find((p) => p.type === 'bridge');
    expect(bridge?.ipam).toMatchObject({ type: 'host-local', dataDir: '/tmp/kubeloop-node-x/cni-ipam' });
  });
});
