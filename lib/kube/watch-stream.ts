// Splits a watch response body (one JSON event per line) into parsed watch events; with a value budget, an
// event whose object holds more JSON values is counted, never parsed, and yielded as its metadata alone.
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { checkJsonBudget } from '../function-client/json-value-budget.ts';
import { memberText } from './json-member.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
  /**
   * The object held more than the budget's JSON values: `object` is then its apiVersion, kind and metadata
   * only, read from the line without parsing the rest (the informer refuses it).
   */
  oversized?: true;
}

export interface WatchReadOptions {
  /** JSON values an event's object may hold before it is refused unparsed; unbounded when omitted. */
  maxObjectValues?: number | undefined;
}

/** Yields events as they arrive; a line that is not JSON is an error (the stream is corrupt). */
export async function* readWatchEvents<T>(body: Readable | AsyncIterable<Buffer | string>, options: WatchReadOptions = {}): AsyncGenerator<WatchEvent<T>> {
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
      if (line !== '') yield parseWatchLine<T>(line, options);
      newline = pending.indexOf('\n', start);
    }
    pending = pending.slice(start);
  }
  const rest = (pending + decoder.end()).trim();
  if (rest !== '') yield parseWatchLine<T>(rest, options);
}

/** The event envelope's own values: the event object and its `type` string. */
const ENVELOPE_VALUES = 2;

export function parseWatchLine<T>(line: string, options: WatchReadOptions = {}): WatchEvent<T> {
  const max = options.maxObjectValues;
  // Counted before JSON.parse: 1.2 MB of `{}` would otherwise become 400,000 heap objects first.
  if (max !== undefined && !checkJsonBudget(line, max + ENVELOPE_VALUES).ok) return oversizedEvent<T>(line);
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

/** An event over the budget, named by the members read from its text (metadata is bounded by the API server). */
function oversizedEvent<T>(line: string): WatchEvent<T> {
  const member = (path: string[]): unknown => {
    const text = memberText(line, path);
    try {
      return text === undefined ? undefined : JSON.parse(text);
    } catch {
      return undefined;
    }
  };
  const type = member(['type']);
  const metadata = member(['object', 'metadata']);
  if (typeof type !== 'string' || typeof metadata !== 'object' || metadata === null) {
    throw new Error(`watch stream: an event over the value budget without type or metadata: ${line.slice(0, 200)}`);
  }
  const object = { apiVersion: member(['object', 'apiVersion']), kind: member(['object', 'kind']), metadata } as T;
  return { type: type as WatchEventType, object, oversized: true };
}
