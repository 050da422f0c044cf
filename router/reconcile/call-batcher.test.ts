import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallBatcher, gatheredEnough, takeBatch } from './call-batcher.ts';
import type { BatchInvoker, DispatchResult, FunctionInvoker, InvokeOptions } from './dispatch.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';

const options = (url = 'http://f/', extra: Partial<InvokeOptions> = {}): InvokeOptions => ({ url, timeoutMs: 1000, ...extra });
const request = (id: string) => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'l', reconcileId: id, trigger: { type: 'ADDED' }, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: id } }, children: {}, now: '' }) as ReconcileRequest;
const ok = (id: string): DispatchResult => ({ kind: 'ok', status: 200, response: { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [], message: id } as never });
const messages = (results: DispatchResult[]) => results.map((r) => (r.kind === 'ok' ? (r.response as { message?: string }).message : r.kind));

afterEach(() => {
  vi.useRealTimers();
});

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

describe('gatheredEnough', () => {
  it('sends at once when the calls waiting fill a batch, or when every worker waits on a call; else the window runs', () => {
    expect(gatheredEnough(16, 16, 16, 16)).toBe(true);
    expect(gatheredEnough(1, 1, 1, 16)).toBe(true);
    expect(gatheredEnough(3, 16, 8, 8)).toBe(true);
    expect(gatheredEnough(3, 16, 7, 8)).toBe(false);
  });
});

/** A fake function: single calls advertise `advertise` (0: nothing), batches are answered unless told to refuse them. */
function invokers(advertise = 64) {
  const singles: string[] = [];
  const batches: string[][] = [];
  let batchAnswer: 'items' | 'refuse' | 'too-large' = advertise ? 'items' : 'refuse';
  const single: FunctionInvoker = async (req) => {
    singles.push(req.reconcileId!);
    return { ...ok(req.reconcileId!), ...(advertise ? { batchMax: advertise } : {}) } as DispatchResult;
  };
  const batch: BatchInvoker = async (items) => {
    batches.push(items.map((i) => i.request.reconcileId));
    await Promise.resolve();
    if (batchAnswer === 'refuse') return { notBatch: 'HTTP 415 to a batch' };
    if (batchAnswer === 'too-large') return { tooLarge: `HTTP 413 to a batch of ${items.length}` };
    return items.map((i) => ok(i.request.reconcileId));
  };
  return { singles, batches, single, batch, answerBatches: (answer: typeof batchAnswer) => (batchAnswer = answer) };
}

/** A batcher whose function has answered one call (`first`) and advertised batches on it. */
async function primed(fake: ReturnType<typeof invokers>, options_: ConstructorParameters<typeof CallBatcher>[2]) {
  const batcher = new CallBatcher(fake.single, fake.batch, options_);
  await batcher.invoke(request('first'), options());
  fake.singles.length = 0;
  return batcher;
}

describe('CallBatcher: a function not known to take batches', () => {
  it('never batches for a function that has not advertised batches on a reply, and never holds its calls', async () => {
    const fake = invokers(0);
    const batcher = new CallBatcher(fake.single, fake.batch, { maxSize: 16, windowMs: 50 });
    vi.useFakeTimers();
    await Promise.all(['a', 'b', 'c'].map((id) => batcher.invoke(request(id), options())));
    await Promise.all(['d', 'e'].map((id) => batcher.invoke(request(id), options())));
    expect(fake.batches).toEqual([]);
    expect(fake.singles).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('sends a Loop\'s first wave alone at once, and the calls after the first reply that advertised batches together', async () => {
    const fake = invokers();
    const batcher = new CallBatcher(fake.single, fake.batch, { maxSize: 16 });
    expect(messages(await Promise.all(['a', 'b', 'c'].map((id) => batcher.invoke(request(id), options()))))).toEqual(['a', 'b', 'c']);
    expect(fake.singles).toEqual(['a', 'b', 'c']);
    await Promise.all(['d', 'e'].map((id) => batcher.invoke(request(id), options())));
    expect(fake.batches).toEqual([['d', 'e']]);
  });

  it('forgets an advertisement when a later reply makes none', async () => {
    let advertise = true;
    const fake = invokers();
    const single: FunctionInvoker = async (req, options_) => {
      const result = await fake.single(req, options_);
      return advertise ? result : ({ ...result, batchMax: undefined } as DispatchResult);
    };
    const batcher = new CallBatcher(single, fake.batch, { maxSize: 16 });
    await batcher.invoke(request('a'), options());
    advertise = false;
    await batcher.invoke(request('b'), options());
    await Promise.all(['c', 'd'].map((id) => batcher.invoke(request(id), options())));
    expect(fake.batches).toEqual([]);
    expect(fake.singles).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('CallBatcher: the gathering window', () => {
  it('holds a call at most windowMs for others to join, then sends what gathered as one batch', async () => {
    const fake = invokers();
    const batcher = await primed(fake, { maxSize: 16, windowMs: 5 });
    vi.useFakeTimers();
    const a = batcher.invoke(request('a'), options());
    await vi.advanceTimersByTimeAsync(3);
    const b = batcher.invoke(request('b'), options());
    await vi.advanceTimersByTimeAsync(1);
    expect(fake.batches).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fake.batches).toEqual([['a', 'b']]);
    expect(messages(await Promise.all([a, b]))).toEqual(['a', 'b']);
  });

  it('never holds a lone call longer than the window', async () => {
    const fake = invokers();
    const batcher = await primed(fake, { maxSize: 16, windowMs: 5 });
    vi.useFakeTimers();
    const lone = batcher.invoke(request('a'), options());
    await vi.advanceTimersByTimeAsync(4);
    expect(fake.singles).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fake.singles).toEqual(['a']);
    expect((await lone).kind).toBe('ok');
  });

  it('sends a full batch at once, without waiting for the window', async () => {
    const fake = invokers();
    const batcher = await primed(fake, { maxSize: 2, windowMs: 50 });
    vi.useFakeTimers();
    const calls = ['a', 'b'].map((id) => batcher.invoke(request(id), options()));
    await vi.advanceTimersByTimeAsync(0);
    expect(fake.batches).toEqual([['a', 'b']]);
    await Promise.all(calls);
  });

  it('sends at once when every worker of the Loop waits on a call: no other call can join', async () => {
    const fake = invokers();
    const batcher = await primed(fake, { maxSize: 16, windowMs: 50, workers: 3 });
    vi.useFakeTimers();
    const calls = ['a', 'b', 'c'].map((id) => batcher.invoke(request(id), options()));
    await vi.advanceTimersByTimeAsync(0);
    expect(fake.batches).toEqual([['a', 'b', 'c']]);
    await Promise.all(calls);
  });
});

describe('CallBatcher: a function that advertised batches', () => {
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
    expect(messages(results)).toEqual(['a', 'b', 'c']);
  });

  it('caps a batch at maxSize and holds further calls while two batches are in flight', async () => {
    const fake = invokers();
    const batcher = await primed(fake, { maxSize: 2, windowMs: 5 });
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

  it('falls back to single calls for good when it then refuses a batch, and tells once', async () => {
    const fake = invokers();
    const told: string[] = [];
    const batcher = await primed(fake, { maxSize: 16, onNotBatch: (url, reason) => told.push(`${url} ${reason}`) });
    fake.answerBatches('refuse');
    const first = await Promise.all(['a', 'b'].map((id) => batcher.invoke(request(id), options())));
    expect(first.every((r) => r.kind === 'ok')).toBe(true);
    await Promise.all(['c', 'd'].map((id) => batcher.invoke(request(id), options())));
    expect(fake.batches).toEqual([['a', 'b']]);
    expect(fake.singles).toEqual(['a', 'b', 'c', 'd']);
    expect(told).toEqual(['http://f/ HTTP 415 to a batch']);
  });

  it('sends the calls of a batch refused as too large again, halving the batch down to single calls, and keeps the smaller size', async () => {
    const fake = invokers();
    const caps: number[] = [];
    const batcher = await primed(fake, { maxSize: 16, onTooLarge: (_url, _reason, cap) => caps.push(cap) });
    fake.answerBatches('too-large');
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((id) => batcher.invoke(request(id), options())));
    expect(messages(results)).toEqual(['a', 'b', 'c', 'd']);
    expect(fake.batches).toEqual([['a', 'b', 'c', 'd'], ['a', 'b'], ['c', 'd']]);
    expect(fake.singles).toEqual(['a', 'b', 'c', 'd']);
    expect(caps).toEqual([2, 1, 1]);
    fake.answerBatches('items');
    await Promise.all(['e', 'f'].map((id) => batcher.invoke(request(id), options())));
    expect(fake.singles).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('keeps and reports the smaller size when a larger batch in flight is refused after a smaller one lowered it', async () => {
    const fake = invokers();
    const caps: number[] = [];
    const sizes: number[] = [];
    const sent: { ids: string[]; refuse: () => void }[] = [];
    const batch: BatchInvoker = (items) => new Promise((resolve) => sent.push({ ids: items.map((i) => i.request.reconcileId!), refuse: () => resolve({ tooLarge: `HTTP 413 to a batch of ${items.length}` }) }));
    const batcher = new CallBatcher(fake.single, batch, { maxSize: 4, maxInFlight: 2, onTooLarge: (_url, _reason, cap) => caps.push(cap), onBatch: (size) => sizes.push(size) });
    await batcher.invoke(request('first'), options());
    const settled = Promise.all(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((id) => batcher.invoke(request(id), options())));
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    await turn();
    expect(sent.map((b) => b.ids.join(''))).toEqual(['abcd', 'efgh']);
    sent[0]!.refuse();
    await turn();
    expect(sent[2]!.ids).toEqual(['a', 'b']);
    sent[2]!.refuse();
    await turn();
    // The batch of 4 still in flight is refused last: halving it would say 2, but 1 already holds.
    sent[1]!.refuse();
    expect(messages(await settled)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
    expect(caps).toEqual([2, 1, 1]);
    expect(sent).toHaveLength(3);
    // Refused batches are not counted as batches the function took.
    expect(sizes).toEqual([]);
  });
});
