import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import type { FunctionOrigin } from '../../lib/function-client/function-client.ts';
import { MemoryInformer } from '../../test/support/memory-informers.ts';
import { harness, podSet, PODSETS, settle, stopRunners } from '../../test/support/loop-runner-harness.ts';
import { parseLoop } from '../base/loop-spec.ts';
import { warmAhead, warmupTarget } from './warm-ahead.ts';

afterEach(stopRunners);

const URL = 'http://podset.fns.svc:8080/';
const loop = (spec: Record<string, unknown> = {}) =>
  parseLoop({ metadata: { name: 'l' }, spec: { for: { apiVersion: PODSETS.apiVersion, kind: PODSETS.kind }, function: { url: URL }, serviceAccount: { namespace: 'a', name: 'loop' }, ...spec } });
const listed = (...objects: KubeObject[]) => ({ synced: true, list: () => objects });
const listing = { synced: false, list: () => [] };

describe('the function connection opened ahead of the first call', () => {
  it("is to the URL the Loop's calls go to, with its caBundle, unless its complete cache holds no primary it selects", () => {
    expect(warmupTarget(loop(), URL, listing)).toEqual({ url: URL, caBundle: undefined });
    expect(warmupTarget(loop(), URL, listed(podSet('one')))).toEqual({ url: URL, caBundle: undefined });
    // Nothing to call: a shared cache, complete, with no primary of this Loop.
    expect(warmupTarget(loop(), URL, listed())).toBeUndefined();
    expect(warmupTarget(loop({ selector: { matchLabels: { tier: 'front' } } }), URL, listed(podSet('one', { labels: { tier: 'back' } })))).toBeUndefined();
    // A spec.function.ref that does not resolve yet: nothing to connect to.
    expect(warmupTarget(loop(), undefined, listing)).toBeUndefined();
  });

  it('opens it as the Loop starts, once, before its access review lets anything be called', async () => {
    const h = harness();
    await h.runner.start(new Promise(() => {}));
    await settle();
    expect(h.preconnects).toEqual([{ url: 'http://podset.fns.svc:8080/', caBundle: undefined }]);
    h.pods.sync();
    h.podsets.gather(podSet('one'));
    await settle();
    expect([h.preconnects.length, h.calls.length]).toEqual([1, 0]);
  });

  it('for a reference resolved while the primaries are listed, opens it at the first primary the list brings', async () => {
    const primary = new MemoryInformer('podsets');
    const ref: { url?: string } = {};
    const opened: FunctionOrigin[] = [];
    warmAhead({ loop: loop(), primary, url: () => ref.url, preconnect: (origin) => opened.push(origin), writes: undefined });
    await settle();
    primary.gather(podSet('one'));
    expect(opened).toEqual([]);
    ref.url = 'http://resolved.fns.svc:8080/';
    primary.gather(podSet('two'));
    primary.gather(podSet('three'));
    expect(opened).toEqual([{ url: 'http://resolved.fns.svc:8080/', caBundle: undefined }]);
  });
});
