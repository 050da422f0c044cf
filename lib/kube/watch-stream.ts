// Splits a watch response body (one JSON event per line) into parsed watch events; with a value budget, an
// event whose object holds more JSON values is counted, never parsed, and yielded as its metadata alone.
// A protobuf body (a metadata-only watch, as client-go's metadata client asks) is protobuf-watch-stream.ts's.
import type { Readable } from 'node:stream';
import { checkJsonBudget, JsonValueBudget } from '../function-client/json-value-budget.ts';
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
  /**
   * The line was no longer than the budget, so its object cannot hold more values (every JSON value takes at
   * least one byte of its own): whoever enforces the budget need not count them again.
   */
  withinBudget?: true;
}

export interface WatchReadOptions {
  /** JSON values an event's object may hold before it is refused unparsed; unbounded when omitted. */
  maxObjectValues?: number | undefined;
}

/**
 * Yields events as they arrive; a line that is not JSON is an error (the stream is corrupt). Lines are cut
 * from the raw bytes (a 1.5 MB event arrives in a hundred chunks: appending each to a string and searching
 * it again would copy the line a hundred times) and decoded once whole, so a multi-byte character split
 * across chunks stays intact.
 */
export async function* readWatchEvents<T>(body: Readable | AsyncIterable<Buffer | string>, options: WatchReadOptions = {}): AsyncGenerator<WatchEvent<T>> {
  for await (const batch of readWatchEventBatches<T>(body, options)) yield* batch;
}

/**
 * The events of each chunk the body delivers, in order, as one batch: a consumer handles a burst of events in
 * one turn of the event loop instead of one promise resolution per event. Never an empty batch.
 */
export async function* readWatchEventBatches<T>(body: Readable | AsyncIterable<Buffer | string>, options: WatchReadOptions = {}): AsyncGenerator<Array<WatchEvent<T>>> {
  const decoder = new WatchLineDecoder<T>(options);
  for await (const received of body as AsyncIterable<Buffer | string>) {
    const batch = decoder.push(received);
    if (batch.length > 0) yield batch;
  }
  const last = decoder.end();
  if (last.length > 0) yield last;
}

/**
 * Cuts JSON watch lines from chunks as they come: push() gives the events a chunk completes (the rest of a line is
 * held until its newline), end() the last line if the body ended without one. A line that is not a watch event throws.
 */
export class WatchLineDecoder<T> {
  readonly #options: WatchReadOptions;
  /** The start of a line whose newline has not come yet. */
  readonly #parts: Buffer[] = [];

  constructor(options: WatchReadOptions = {}) {
    this.#options = options;
  }

  push(received: Buffer | string): Array<WatchEvent<T>> {
    const chunk = typeof received === 'string' ? Buffer.from(received) : received;
    const parts = this.#parts;
    const batch: Array<WatchEvent<T>> = [];
    let start = 0;
    let newline = chunk.indexOf(NEWLINE);
    while (newline >= 0) {
      let event: WatchEvent<T> | undefined;
      if (parts.length === 0) {
        event = parseWatchBytes<T>(chunk, start, newline, this.#options);
      } else {
        parts.push(chunk.subarray(start, newline));
        const line = Buffer.concat(parts);
        parts.length = 0;
        event = parseWatchBytes<T>(line, 0, line.length, this.#options);
      }
      if (event) batch.push(event);
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) parts.push(chunk.subarray(start));
    return batch;
  }

  end(): Array<WatchEvent<T>> {
    if (this.#parts.length === 0) return [];
    const line = Buffer.concat(this.#parts);
    this.#parts.length = 0;
    const event = parseWatchBytes<T>(line, 0, line.length, this.#options);
    return event ? [event] : [];
  }
}

const NEWLINE = 0x0a;

/** The event of one line, bytes [start, end) of `bytes`: its values counted on the bytes first (nothing for a blank line). */
function parseWatchBytes<T>(bytes: Buffer, start: number, end: number, options: WatchReadOptions): WatchEvent<T> | undefined {
  const max = options.maxObjectValues;
  const length = end - start;
  // Counted before JSON.parse: 1.2 MB of `{}` would otherwise become 400,000 heap objects first.
  if (max !== undefined && length > max && !new JsonValueBudget(max + ENVELOPE_VALUES).feed(bytes.subarray(start, end)).ok) return oversizedEvent<T>(bytes.toString('utf8', start, end).trim());
  const text = bytes.toString('utf8', start, end).trim();
  if (text === '') return undefined;
  const event = parseWatchLine<T>(text);
  if (max !== undefined && length <= max) event.withinBudget = true;
  return event;
}

/** The event envelope's own values: the event object and its `type` string. */
const ENVELOPE_VALUES = 2;

/** One event from its line of text, as the API server wrote it. */
export function parseWatchLine<T>(line: string, options: WatchReadOptions = {}): WatchEvent<T> {
  const max = options.maxObjectValues;
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
