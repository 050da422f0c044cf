import { describe, expect, it } from 'vitest';
import { clusterLoopRefusal } from './cluster-loop-refusal.ts';

describe('clusterLoopRefusal', () => {
  it('names the file and the ClusterLoop, says why, and gives the two ways that work', () => {
    const message = clusterLoopRefusal('loop.yaml', 'labeller');
    expect(message).toMatch(/^--loop loop\.yaml: ClusterLoop labeller cannot run on kubeloop dev's own control plane/);
    expect(message).toContain("the chart's ServiceAccount, which may impersonate only the ClusterLoops the chart renders from values.yaml");
    expect(message).toContain('kubeloop init without --cluster');
    expect(message).toContain('`kubeloop cluster up --detach`, then `kubeloop dev --kubeconfig <the kubeconfig it prints> --no-seeds --function ... --loop loop.yaml`');
  });
});
