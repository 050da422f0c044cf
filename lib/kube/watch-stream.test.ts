import { describe, expect, it } from 'vitest';
import { parseWatchLine, readWatchEventBatches, readWatchEvents } from './watch-stream.ts';

async function collect(chunks: Array<string | Buffer>) {
  async function* source() {
    for (const c of chunks) yield c;
  }
  const out = [];
  for await (const e of readWatchEvents<{ metadata: { name: string } }>(source())) out.push(e);
  return out;
}

describe('readWatchEvents', () => {
  it('reassembles events split across chunks, including multi-byte characters', async () => {
    const line = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'grüß' } } });
    const bytes = Buffer.from(`${line}\n${line}\n`);
    const cut = bytes.indexOf(Buffer.from('ü')) + 1; // in the middle of the two-byte ü
    const events = await collect([bytes.subarray(0, cut), bytes.subarray(cut)]);
    expect(events.map((e) => e.object.metadata.name)).toEqual(['grüß', 'grüß']);
  });
  it('accepts a final event without a newline', async () => {
    const events = await collect(['{"type":"BOOKMARK","object":{"metadata":{"name":"x"}}}']);
    expect(events[0]?.type).toBe('BOOKMARK');
  });
  it('fails on a line that is not an event', async () => {
    await expect(collect(['{"nope":1}\n'])).rejects.toThrow('not a watch event');
    await expect(collect(['garbage\n'])).rejects.toThrow('not JSON');
  });
});

describe('parseWatchLine with a value budget', () => {
  it('passes an object of exactly the budget and names one over it by its metadata, unparsed', () => {
    const object = (empties: number) => ({ apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'bomb', namespace: 'a', resourceVersion: '7' }, spec: { x: Array.from({ length: empties }, () => ({})) } });
    // The object, apiVersion, kind, metadata and its 3 strings, spec and x: 9 values, and 91 empty objects.
    const fits = parseWatchLine(JSON.stringify({ type: 'ADDED', object: object(91) }), { maxObjectValues: 100 });
    expect(fits.oversized).toBeUndefined();
    expect(fits.object).toEqual(object(91));
    const over = parseWatchLine(JSON.stringify({ type: 'MODIFIED', object: object(92) }), { maxObjectValues: 100 });
    expect(over).toEqual({ type: 'MODIFIED', oversized: true, object: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'bomb', namespace: 'a', resourceVersion: '7' } } });
  });

  it('refuses 400,000 empty objects without building them', () => {
    const line = `{"type":"ADDED","object":{"metadata":{"name":"bomb"},"spec":{"x":[${'{},'.repeat(399_999)}{}]}}}`;
    const before = process.memoryUsage().heapUsed;
    const event = parseWatchLine(line, { maxObjectValues: 100_000 });
    expect(event.oversized).toBe(true);
    expect(event.object).toEqual({ metadata: { name: 'bomb' } });
    // Parsed, the line costs ~20 MiB of heap objects; counted, a few KiB of slices.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(8 * 1024 * 1024);
  });
});

describe('readWatchEvents with a value budget', () => {
  it('names an oversized event arriving in many chunks by its metadata and parses the small one after it', async () => {
    const bomb = `{"type":"ADDED","object":{"metadata":{"name":"bomb"},"spec":{"x":[${'{},'.repeat(199_999)}{}]}}}\n`;
    const small = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'grüß' } } });
    const bytes = Buffer.from(bomb + small);
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 16 * 1024) yield bytes.subarray(i, i + 16 * 1024);
    }
    const events = [];
    for await (const e of readWatchEvents<{ metadata: { name: string } }>(chunks(), { maxObjectValues: 100_000 })) events.push(e);
    expect(events).toEqual([
      { type: 'ADDED', oversized: true, object: { apiVersion: undefined, kind: undefined, metadata: { name: 'bomb' } } },
      { type: 'ADDED', object: { metadata: { name: 'grüß' } }, withinBudget: true },
    ]);
  });
});

describe('readWatchEvents marks events too short to be over the budget', () => {
  it('marks a line no longer than the budget and leaves a longer one to be counted', async () => {
    const short = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } });
    // Few values, but more bytes than the budget: only counting tells, so it is not marked.
    const long = JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'b' }, data: { x: 'y'.repeat(200) } } });
    async function* source() {
      yield `${short}\n${long}\n`;
    }
    const events = [];
    for await (const e of readWatchEvents<{ metadata: { name: string } }>(source(), { maxObjectValues: 100 })) events.push(e);
    expect(events.map((e) => [e.object.metadata.name, e.withinBudget, e.oversized])).toEqual([
      ['a', true, undefined],
      ['b', undefined, undefined],
    ]);
  });
});

describe('readWatchEventBatches', () => {
  it("yields each chunk's complete events as one batch, in order, carrying a split line to the next", async () => {
    const line = (name: string, resourceVersion: string, type = 'MODIFIED') => JSON.stringify({ type, object: { metadata: { name, resourceVersion } } });
    const text = `${line('a', '1', 'ADDED')}\n${line('b', '2')}\n\n${line('rv', '3', 'BOOKMARK')}\n${line('c', '4')}\n${line('d', '5')}`;
    const cut = text.indexOf('"c"');
    async function* source() {
      yield text.slice(0, cut);
      yield text.slice(cut);
    }
    const batches = [];
    for await (const batch of readWatchEventBatches<{ metadata: { name: string; resourceVersion: string } }>(source())) batches.push(batch.map((e) => `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`));
    expect(batches).toEqual([['ADDED a@1', 'MODIFIED b@2', 'BOOKMARK rv@3'], ['MODIFIED c@4'], ['MODIFIED d@5']]);
  });
});
