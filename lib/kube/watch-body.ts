// A watch response's events in the encoding the server chose among those the request accepted: protobuf frames
// (protobuf-watch-stream.ts) or JSON lines (watch-stream.ts).
import type { Readable } from 'node:stream';
import { isProtobufMediaType, readProtobufWatchEventBatches } from './protobuf-watch-stream.ts';
import { readWatchEventBatches, type WatchEvent, type WatchReadOptions } from './watch-stream.ts';

/** readWatchEventBatches of a body in the encoding its Content-Type names. */
export function readWatchBodyBatches<T>(body: Readable, contentType: string, options: WatchReadOptions = {}): AsyncGenerator<Array<WatchEvent<T>>> {
  return isProtobufMediaType(contentType) ? readProtobufWatchEventBatches<T>(body, options) : readWatchEventBatches<T>(body, options);
}
