import { describe, expect, it } from 'vitest';
import { readWatchEvents } from './watch-stream.ts';

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
