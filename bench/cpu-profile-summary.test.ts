// The profile summary groups self time where a reader looks for it: per package, per kubeloop folder, GC apart.
import { describe, expect, it } from 'vitest';
import { category, summarize, workOf } from './cpu-profile-summary.ts';

describe('category', () => {
  it('names the package a frame comes from, scoped packages with their scope', () => {
    expect(category('file:///app/node_modules/undici/lib/dispatcher/client-h2.js', 'writeH2')).toBe('undici');
    expect(category('file:///app/node_modules/@kubernetes/client-node/dist/gen/models.js', 'x')).toBe('@kubernetes/client-node');
  });
  it("names kubeloop's own stage folder, compiled or from source", () => {
    expect(category('file:///tmp/b/dist/router/apply/apply-actions.js', 'apply')).toBe('router/apply');
    expect(category('file:///work/main/lib/kube/kube-client.ts', 'request')).toBe('lib/kube');
    expect(category('file:///work/wt/bench/webhooks/server.ts', 'handle')).toBe('webhooks');
    expect(category('file:///work/wt/bench/lib/runtime/function-core.ts', 'parseBody')).toBe('lib/runtime');
  });
  it("keeps Node's modules, the garbage collector and native frames apart", () => {
    expect(category('node:internal/streams/readable', 'read')).toBe('node:internal/streams');
    expect(category('node:events', 'emit')).toBe('node:events');
    expect(category('', '(garbage collector)')).toBe('(gc)');
    expect(category('', 'JSONParse')).toBe('(native)');
  });
});

describe('summarize', () => {
  it('sums self time per category and per function, leaving idle out of the total', () => {
    const summary = summarize({
      nodes: [
        { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [2, 3, 4] },
        { id: 2, callFrame: { functionName: 'parse', url: 'file:///a/node_modules/undici/x.js', lineNumber: 9 } },
        { id: 3, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } },
        { id: 4, callFrame: { functionName: '(garbage collector)', url: '', lineNumber: -1 } },
      ],
      samples: [2, 2, 3, 4],
      timeDeltas: [1000, 3000, 50_000, 2000],
      startTime: 0,
      endTime: 56_000,
    });
    expect(summary.totalMs).toBe(6);
    expect(summary.byCategory.get('undici')).toBe(4);
    expect(summary.byCategory.get('(gc)')).toBe(2);
    expect(summary.byCategory.has('(idle)')).toBe(false);
    expect(summary.byFunction.get('parse x.js:10')).toBe(4);
    // The undici frame is the function hop's (no watch frame under it); GC its own.
    expect(summary.byWork.get('function hop')).toBe(4);
    expect(summary.byWork.get('(gc, program)')).toBe(2);
  });
});

describe('workOf', () => {
  const frame = (functionName: string, url: string) => ({ functionName, url });
  const undici = frame('onData', 'file:///app/node_modules/undici/lib/dispatcher/client-h1.js');
  it('puts a watch read through undici under the watch, and a bare undici frame under the function hop', () => {
    expect(workOf([frame('readObjectMeta', 'file:///tmp/b/dist/lib/kube/protobuf-object.js'), undici])).toBe('watch and informer');
    expect(workOf([frame('writev', ''), undici, frame('call', 'file:///tmp/b/dist/lib/function-client/function-client.js')])).toBe('function hop');
  });
  it("names the API writes, GC, the profile's module loading, and leaves the rest as other", () => {
    expect(workOf([frame('request', 'node:internal/http2/core'), frame('#attempt', 'file:///tmp/b/dist/lib/kube/node-http2-writes.js')])).toBe('API writes');
    expect(workOf([frame('(garbage collector)', '')])).toBe('(gc, program)');
    expect(workOf([frame('compileSourceTextModule', 'node:internal/modules/esm/utils'), frame('x', 'node:internal/modules/esm/loader')])).toBe('(module loading)');
    expect(workOf([frame('#next', 'file:///tmp/b/dist/router/base/work-queue.js')])).toBe('other (queue, reconcile, timers, continuations)');
  });
});
