// Three projects: fast unit tests next to the code, e2e suites that share one real control plane, and the chart on
// a real node (root, runc and the CNI plugins: .ci/run installs them).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{api,bench,cli,lib,router,functions,webhooks,certs,test/http,test/soak,test/chart,test/layout,test/support}/**/*.test.ts'],
          testTimeout: 20_000,
          // Projects with different maxWorkers need distinct group orders, or `vitest run` refuses to start.
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/cluster/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          // Suites share one control plane; each works in its own namespace. Two cores: keep it modest.
          maxWorkers: 2,
          fileParallelism: true,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          // The chart on a real node (containerd, kubelet, kube-proxy: docs/control-plane.md, "A real node"): its own
          // control plane, one file at a time (one real node per machine), after the e2e project.
          name: 'real-node',
          include: ['test/real-node/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 900_000,
          maxWorkers: 1,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
