// The heap profile summary says who allocated what: per package or folder, per function, and per nearest own caller.
import { describe, expect, it } from 'vitest';
import { summarizeHeap, type HeapProfileNode } from './heap-profile-summary.ts';

const node = (functionName: string, url: string, selfSize: number, children: HeapProfileNode[] = []): HeapProfileNode => ({
  callFrame: { functionName, url, lineNumber: 9 },
  selfSize,
  children,
});

describe('summarizeHeap', () => {
  const profile = {
    head: node('(root)', '', 0, [
      node('reconcileKey', 'file:///tmp/b/dist/router/reconcile/reconcile-key.js', 100, [
        // Node allocates for a kubeloop caller: counted to Node, asked for by reconcileKey.
        node('nextTick', 'node:internal/process/task_queues', 400, [node('(anonymous)', 'file:///tmp/b/node_modules/undici/lib/core/util.js', 50)]),
      ]),
      node('onStreamRead', 'node:internal/stream_base_commons', 1000),
    ]),
  };

  it('sums self bytes per package or folder and per function', () => {
    const summary = summarizeHeap(profile);
    expect(summary.totalBytes).toBe(1550);
    expect(summary.byCategory.get('router/reconcile')).toBe(100);
    expect(summary.byCategory.get('node:internal/process')).toBe(400);
    expect(summary.byCategory.get('undici')).toBe(50);
    expect(summary.byFunction.get('reconcileKey reconcile-key.js:10')).toBe(100);
  });

  it("charges what Node and packages allocate to the nearest kubeloop frame above them, and none when there is none", () => {
    const summary = summarizeHeap(profile);
    expect(summary.byOwnCaller.get('reconcileKey reconcile-key.js:10')).toBe(550);
    expect(summary.byOwnCaller.get('(no kubeloop frame)')).toBe(1000);
  });
});
