// Splits a protobuf watch response (application/vnd.kubernetes.protobuf;stream=watch: each frame a 4-byte big-endian
// length, then a WatchEvent whose object is enveloped, protobuf-object.ts) into batches of watch events, as
// watch-stream.ts does for JSON lines.
import { MessageReader, readEnvelopedObject } from './protobuf-object.ts';
import type { WatchEvent, WatchEventType, WatchReadOptions } from './watch-stream.ts';

/** Whether a response's Content-Type is Kubernetes' protobuf encoding. */
export function isProtobufMediaType(contentType: string): boolean {
  return contentType.startsWith('application/vnd.kubernetes.protobuf');
}

/** A frame longer than this is taken for a corrupt stream (the library's own default limit for a message). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

const HEADER_BYTES = 4;
/** WatchEvent's type (1) and object (2), and the object's RawExtension's raw (1): length-delimited tags. */
const TYPE_TAG = (1 << 3) | 2;
const OBJECT_TAG = (2 << 3) | 2;
const RAW_TAG = (1 << 3) | 2;

/**
 * Cuts protobuf watch frames from chunks as they come, as WatchLineDecoder (watch-stream.ts) cuts JSON lines: push()
 * gives the events of the frames a chunk completes, one batch a chunk. A frame split across chunks is put together
 * once it is whole, not at every chunk; a body that ends inside a frame is an error.
 */
export class ProtobufWatchDecoder<T> {
  readonly #options: WatchReadOptions;
  readonly #parts: Buffer[] = [];
  #held = 0;
  /** Bytes the held parts must reach before a frame can be read from them. */
  #needed = HEADER_BYTES;

  constructor(options: WatchReadOptions = {}) {
    this.#options = options;
  }

  /** The events of the frames this chunk completes. */
  push(chunk: Buffer): Array<WatchEvent<T>> {
    const parts = this.#parts;
    let bytes = chunk;
    if (parts.length > 0) {
      parts.push(chunk);
      this.#held += chunk.length;
      if (this.#held < this.#needed) return [];
      bytes = Buffer.concat(parts, this.#held);
      parts.length = 0;
      this.#held = 0;
    }
    const batch: Array<WatchEvent<T>> = [];
    let offset = 0;
    while (bytes.length - offset >= HEADER_BYTES) {
      const length = frameLength(bytes, offset);
      if (bytes.length - offset - HEADER_BYTES < length) break;
      const start = offset + HEADER_BYTES;
      batch.push(decodeWatchEvent<T>(bytes.subarray(start, start + length), this.#options));
      offset = start + length;
    }
    if (offset < bytes.length) {
      const rest = bytes.subarray(offset);
      parts.push(rest);
      this.#held = rest.length;
      this.#needed = rest.length >= HEADER_BYTES ? HEADER_BYTES + frameLength(rest, 0) : HEADER_BYTES;
    }
    return batch;
  }

  /** Nothing is left at a frame's end: a body that ends inside a frame throws. */
  end(): Array<WatchEvent<T>> {
    if (this.#held > 0) throw new Error(`watch stream: ended inside a protobuf frame (${this.#held} bytes of it)`);
    return [];
  }
}

function frameLength(bytes: Buffer, offset: number): number {
  const length = bytes.readUInt32BE(offset);
  if (length > MAX_FRAME_BYTES) throw new Error(`watch stream: a protobuf frame of ${length} bytes (more than ${MAX_FRAME_BYTES}): not a watch stream`);
  return length;
}

/**
 * One frame's WatchEvent (type 1, object 2: a RawExtension whose raw, 1, is the enveloped object). Every value it
 * decodes takes at least one byte of the frame: a frame no longer than the budget is within it.
 */
export function decodeWatchEvent<T>(frame: Buffer, options: WatchReadOptions = {}): WatchEvent<T> {
  const reader = new MessageReader(frame);
  let type: string | undefined;
  let object: T | undefined;
  while (reader.pos < frame.length) {
    const tag = reader.uint32();
    if (tag === TYPE_TAG) type = reader.text();
    else if (tag === OBJECT_TAG) {
      const rawExtensionEnd = reader.end();
      while (reader.pos < rawExtensionEnd) {
        const rawTag = reader.uint32();
        if (rawTag === RAW_TAG) object = readEnvelopedObject(reader, reader.end()) as T;
        else reader.skipField(rawTag);
      }
      reader.ended(rawExtensionEnd);
    } else reader.skipField(tag);
  }
  reader.ended(frame.length);
  if (type === undefined || object === undefined) throw new Error(`watch stream: a protobuf frame that is not a watch event (${type ?? 'no type'}${object === undefined ? ', no object' : ''})`);
  const event: WatchEvent<T> = { type: type as WatchEventType, object };
  if (options.maxObjectValues !== undefined && frame.length <= options.maxObjectValues) event.withinBudget = true;
  return event;
}
