import { describe, expect, it } from 'vitest';
import { BuildSteps, progressReporter } from './progress.ts';

describe('build progress', () => {
  it('fills the bar as announced binaries are built', () => {
    const steps = new BuildSteps();
    steps.observe('building kube-apiserver, kubectl, etcd, helm with go1.26.8 (cold: about 15-25 min)');
    expect(steps.bar(8)).toBe('[........] 0/4');
    steps.observe('built kube-apiserver, kubectl in 300s');
    expect(steps.bar(8)).toBe('[####....] 2/4');
  });

  it('prints each message once, without escape codes, when not on a terminal', () => {
    let written = '';
    const clock = [0, 61_000, 125_000];
    const progress = progressReporter({ write: (t) => ((written += t), true), isTTY: false }, 'cluster', () => clock.shift() ?? 125_000);
    progress.update('building kube-apiserver ...');
    progress.done('control plane ready');
    expect(written).toBe('[cluster 1:01] building kube-apiserver ...\n[cluster 2:05] control plane ready\n');
  });
});
