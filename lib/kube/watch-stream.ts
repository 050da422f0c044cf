// Splits a watch response body (one JSON event per line) into parsed watch events.
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

/** Yields events as they arrive; a line that is not JSON is an error (the stream is corrupt). */
export async function* readWatchEvents<T>(body: Readable | AsyncIterable<Buffer | string>): AsyncGenerator<WatchEvent<T>> {
  let pending = '';
  // A decoder keeps a multi-byte character split across two chunks intact.
  const decoder = new StringDecoder('utf8');
  for await (const chunk of body as AsyncIterable<Buffer | string>) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    // Scan with an offset and cut once per chunk: slicing per line would copy the buffer repeatedly.
    let start = 0;
    let newline = pending.indexOf('\n', start);
    while (newline >= 0) {
      const line = pending.slice(start, newline).trim();
      start = newline + 1;
      if (line !== '') yield parseWatchLine<T>(line);
      newline = pending.indexOf('\n', start);
    }
    pending = pending.slice(start);
  }
  const rest = (pending + decoder.end()).trim();
  if (rest !== '') yield parseWatchLine<T>(rest);
}

export function parseWatchLine<T>(line: string): WatchEvent<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new Error(`watch stream: not JSON: ${line.slice(0, 200)}`);
  }
  const event = parsed as Partial<WatchEvent<T>>;
  if (typeof event.type !== 'string' || typeof event.object !== 'object' || event.object === null) {
    throw new Error(`watch stream: not a watch event: ${line.slice(0, 200)}`);
  }
  return event as WatchEvent<T>;
}
