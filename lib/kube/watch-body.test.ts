import { describe, expect, it } from 'vitest';
import { PassThrough, Readable } from 'node:stream';
import { consumeWatchBody } from './watch-body.ts';
import type { WatchEvent } from './watch-stream.ts';
import { partialObjectMetadata, watchFrame } from '../../test/support/protobuf-watch-frames.ts';

type Named = { metadata: { name: string } };
const JSON_WATCH = 'application/json;stream=watch';
const PROTOBUF_WATCH = 'application/vnd.kubernetes.protobuf;stream=watch';
const line = (type: string, name: string) => `${JSON.stringify({ type, object: { metadata: { name } } })}\n`;
const names = (batch: Array<WatchEvent<Named>>) => batch.map((e) => `${e.type} ${e.object.metadata.name}`);

describe('consumeWatchBody', () => {
  it("hands over each chunk's events as one batch, in the chunk's own turn, a split line with the chunk completing it", async () => {
    const body = new PassThrough();
    const batches: string[][] = [];
    const done = consumeWatchBody<Named>(body, JSON_WATCH, {}, (batch) => batches.push(names(batch)));
    const text = line('ADDED', 'a') + line('MODIFIED', 'b') + line('BOOKMARK', 'rv');
    body.write(text.slice(0, text.indexOf('"rv"')));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([['ADDED a', 'MODIFIED b']]);
    body.write(text.slice(text.indexOf('"rv"')));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([['ADDED a', 'MODIFIED b'], ['BOOKMARK rv']]);
    body.end('{"type":"DELETED","object":{"metadata":{"name":"last, no newline"}}}');
    await done;
    expect(batches).toEqual([['ADDED a', 'MODIFIED b'], ['BOOKMARK rv'], ['DELETED last, no newline']]);
  });

  it('reads the encoding the Content-Type names', async () => {
    const read = async (contentType: string, bytes: Buffer) => {
      const out: string[] = [];
      await consumeWatchBody<Named>(Readable.from([bytes]), contentType, {}, (batch) => out.push(...batch.map((e) => e.type)));
      return out;
    };
    expect(await read(PROTOBUF_WATCH, watchFrame('ADDED', partialObjectMetadata({ name: 'a', namespace: 'team-a' })))).toEqual(['ADDED']);
    expect(await read(JSON_WATCH, Buffer.from(line('DELETED', 'a')))).toEqual(['DELETED']);
  });

  it('rejects with what the handler threw, destroys the body and hands over nothing after it', async () => {
    const body = new PassThrough();
    const seen: string[] = [];
    const done = consumeWatchBody<Named>(body, JSON_WATCH, {}, (batch) => {
      seen.push(...names(batch));
      throw new Error('watch of configmaps: 410 Gone');
    });
    body.write(line('ERROR', 'gone'));
    await expect(done).rejects.toThrow('410 Gone');
    expect(body.destroyed).toBe(true);
    body.write(line('ADDED', 'after'));
    expect(seen).toEqual(['ERROR gone']);
  });

  it("rejects with the body's error (an abort, a reset stream) and a line that is not JSON as a corrupt stream", async () => {
    const aborted = new PassThrough();
    const reading = consumeWatchBody<Named>(aborted, JSON_WATCH, {}, () => {});
    aborted.destroy(new Error('This operation was aborted'));
    await expect(reading).rejects.toThrow('This operation was aborted');
    await expect(consumeWatchBody<Named>(Readable.from([Buffer.from('<html>proxy error</html>\n')]), JSON_WATCH, {}, () => {})).rejects.toThrow('watch stream: not JSON');
  });

  it('rejects a body cut short: destroyed without an error, or ended inside a protobuf frame', async () => {
    const cut = new PassThrough();
    const reading = consumeWatchBody<Named>(cut, JSON_WATCH, {}, () => {});
    cut.write(line('ADDED', 'a'));
    cut.destroy();
    await expect(reading).rejects.toThrow('Premature close');
    const frame = watchFrame('ADDED', partialObjectMetadata({ name: 'a', namespace: 'team-a' }));
    await expect(consumeWatchBody<Named>(Readable.from([frame.subarray(0, frame.length - 3)]), PROTOBUF_WATCH, {}, () => {})).rejects.toThrow('ended inside a protobuf frame');
  });
});
