import { describe, expect, it } from 'vitest';
import { CallBatcher, takeBatch } from './call-batcher.ts';
import type { BatchInvoker, DispatchResult, FunctionInvoker, InvokeOptions } from './dispatch.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';

const options = (url = 'http://f/', extra: Partial<InvokeOptions> = {}): InvokeOptions => ({ url, timeoutMs: 1000, ...extra });
const request = (id: string) => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'l', reconcileId: id, trigger: { type: 'ADDED' }, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: id } }, children: {}, now: '' }) as ReconcileRequest;
const ok = (id: string): DispatchResult => ({ kind: 'ok', status: 200, response: { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [], message: id } as never });

describe('takeBatch', () => {
  it('takes the oldest call and those after it with the same target, up to the cap; the rest stay in order', () => {
    const calls = [options('a'), options('b'), options('a'), options('a', { timeoutMs: 5 }), options('a'), options('a')].map((o, i) => ({ i, options: o }));
    const { batch, rest } = takeBatch(calls, 3);
    expect(batch.map((c) => c.i)).toEqual([0, 2, 4]);
    expect(rest.map((c) => c.i)).toEqual([1, 3, 5]);
  });

  it('never batches calls signed with different keys or trusting different CAs', () => {
    const calls = [options('a', { signingKey: { request: [] } as never }), options('a'), options('a', { caBundle: 'pem' })].map((o, i) => ({ i, options: o }));
    expect(takeBatch(calls, 10).batch.map((c) => c.i)).toEqual([0]);
  });
});

function invokers(advertise = 64) {
  const singles: string[] = [];
  const batches: string[][] = [];
  let notBatch = false;
  const single: FunctionInvoker = async (req) => {
    singles.push(req.reconcileId!);
    return { ...ok(req.reconcileId!), ...(advertise ? { batchMax: advertise } : {}) } as DispatchResult;
  };
  const batch: BatchInvoker = async (items) => {
    batches.push(items.map((i) => i.request.reconcileId));
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (notBatch) return { notBatch: 'HTTP 415 to a batch' };
    return items.map((i) => ok(i.request.reconcileId));
  };
  return { singles, batches, single, batch, refuseBatches: () => (notBatch = true) };
}

/** A batcher whose function has answered one call (`first`) and advertised batches on it. */
async function primed(fake: ReturnType<typeof invokers>, options_: ConstructorParameters<typeof CallBatcher>[2]) {
  const batcher = new CallBatcher(fake.single, fake.batch, options_);
  await batcher.invoke(request('first'), options());
  fake.singles.length = 0;
  return batcher;
}

describe('CallBatcher', () => {
  it('never batches for a function that has not advertised batches on a reply', async () => {
    const fake = invokers(0);
    const batcher = new CallBatcher(fake.single, fake.batch, { maxSize: 16 });
    await Promise.all(['a', 'b', 'c'].map((id) => batcher.invoke(request(id), options())));
    await Promise.all(['d', 'e'].map((id) => batcher.invoke(request(id), options())));
    expect(fake.batches).toEqual([]);
    expect(fake.singles).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('sends the first call alone and the calls made meanwhile together once its reply advertised batches', async () => {
    const fake = invokers();
    const batcher = new CallBatcher(fake.single, fake.batch, { maxSize: 16 });
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((id) => batcher.invoke(request(id), options())));
    expect(fake.singles).toEqual(['a']);
    expect(fake.batches).toEqual([['b', 'c', 'd', 'e']]);
  });

  it('sends the calls waiting for a first call that hangs alone once the probe wait is over, before it answers', async () => {
    const fake = invokers();
    let answerFirst!: () => void;
    const held = new Promise<void>((resolve) => (answerFirst = resolve));
    const single: FunctionInvoker = async (req, options_) => {
      if (req.reconcileId === 'a') await held;
      return fake.single(req, options_);
    };
    const batcher = new CallBatcher(single, fake.batch, { maxSize: 16, probeWaitMs: 20 });
    const first = batcher.invoke(request('a'), options());
    const others = await Promise.all(['b', 'c'].map((id) => batcher.invoke(request(id), options())));
    expect(others.map((r) => r.kind)).toEqual(['ok', 'ok']);
    expect(fake.singles).toEqual(['b', 'c']);
    expect(fake.batches).toEqual([]);
    answerFirst();
    await first;
    expect(fake.singles).toEqual(['b', 'c', 'a']);
  });

  it('keeps a batch within the size the function advertised', async () => {
    const fake = invokers(2);
    const batcher = await primed(fake, { maxSize: 16, maxInFlight: 1 });
    await Promise.all(['a', 'b', 'c'].map((id) => batcher.invoke(request(id), options())));
    expect(fake.batches).toEqual([['a', 'b']]);
    expect(fake.singles).toEqual(['c']);
  });

  it('sends the calls made in one turn as one batch, each caller getting its own result', async () => {
    const fake = invokers();
    const batcher = await primed(fake, { maxSize: 16 });
    const results = await Promise.all(['a', 'b', 'c'].map((id) => batcher.invoke(request(id), options())));
    expect(fake.batches).toEqual([['a', 'b', 'c']]);
    expect(fake.singles).toEqual([]);
    expect(results.map((r) => (r.kind === 'ok' ? (r.response as { message?: string }).message : r.kind))).toEqual(['a', 'b', 'c']);
  });

  it('caps a batch at maxSize and holds further calls while two batches are in flight', async () => {
    const fake = invokers();
    const batcher = await primed(fake, { maxSize: 2 });
    await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((id) => batcher.invoke(request(id), options())));
    expect(fake.batches).toEqual([['a', 'b'], ['c', 'd'], ['e', 'f']]);
  });

  it('sends a lone call as a single call', async () => {
    const fake = invokers();
    const batcher = await primed(fake, { maxSize: 16 });
    await batcher.invoke(request('a'), options());
    expect(fake.singles).toEqual(['a']);
    expect(fake.batches).toEqual([]);
  });

  it('falls back to single calls for a function that does not answer batches, and tells once', async () => {
    const fake = invokers();
    fake.refuseBatches();
    const told: string[] = [];
    const batcher = await primed(fake, { maxSize: 16, onNotBatch: (url, reason) => told.push(`${url} ${reason}`) });
    const first = await Promise.all(['a', 'b'].map((id) => batcher.invoke(request(id), options())));
    expect(first.every((r) => r.kind === 'ok')).toBe(true);
    await Promise.all(['c', 'd'].map((id) => batcher.invoke(request(id), options())));
    expect(fake.batches).toEqual([['a', 'b']]);
    expect(fake.singles).toEqual(['a', 'b', 'c', 'd']);
    expect(told).toEqual(['http://f/ HTTP 415 to a batch']);
  });
});
