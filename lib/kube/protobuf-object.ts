// The Kubernetes protobuf encoding of what a metadata-only watch carries (apimachinery's generated.proto): the
// `k8s\0` envelope (runtime.Unknown) around a PartialObjectMetadata or a Status, decoded to the object its JSON
// encoding gives, managedFields skipped by their length, never decoded. The wire format is @bufbuild/protobuf's.
import type { KubernetesObject, V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';
import { BinaryReader } from '@bufbuild/protobuf/wire';

/** The bytes that open every object the API server encodes as protobuf (k8s.io/apimachinery runtime/serializer/protobuf). */
const ENVELOPE_MAGIC = Buffer.from('k8s\0', 'latin1');

/** A decoded object: apiVersion and kind from the envelope, then what its message holds. */
export type DecodedObject = KubernetesObject & Record<string, unknown>;

/** A field's tag as the wire writes it: its number, then its wire type (0 a varint, 2 length-delimited). */
export const varint = (field: number): number => field << 3;
export const delimited = (field: number): number => (field << 3) | 2;

/**
 * The wire reader over one Buffer. Decoders switch on whole tags and skip what they do not read: no array per tag,
 * no closure per message, which a watch of thousands of objects pays per field.
 */
export class MessageReader extends BinaryReader {
  readonly #bytes: Buffer;
  constructor(bytes: Buffer) {
    super(bytes);
    this.#bytes = bytes;
  }
  /** The end of the length-delimited value here, its length read. */
  end(): number {
    const end = this.uint32() + this.pos;
    if (end > this.len) throw new RangeError('protobuf object: a message runs past its frame');
    return end;
  }
  text(): string {
    const end = this.end();
    const start = this.pos;
    this.pos = end;
    // No subarray per string, and ASCII (nearly every string here) takes Buffer's fast path.
    return this.#bytes.toString('utf8', start, end);
  }
  int64Number(): number {
    return Number(this.int64());
  }
  /**
   * Skips the field of `tag`, whose tag was read. A length-delimited one (managedFields, every field not read) by
   * its length here: BinaryReader.skip returns what it skipped as a new view of the bytes, one per skipped field.
   */
  skipField(tag: number): void {
    if ((tag & 7) === 2) this.pos = this.end();
    else this.skip(tag & 7, tag >>> 3);
  }
  /** The message that ended at `end` ended exactly there. */
  ended(end: number): void {
    if (this.pos !== end) throw new RangeError('protobuf object: a field runs past its message');
  }
  /** Whether the bytes here open an enveloped object. */
  atEnvelope(): boolean {
    return this.#bytes.compare(ENVELOPE_MAGIC, 0, ENVELOPE_MAGIC.length, this.pos, this.pos + ENVELOPE_MAGIC.length) === 0;
  }
}

/** The object an enveloped message holds, as metadata (a Status whole); an encoding this decoder does not read is an error. */
export function decodeEnvelopedObject(bytes: Buffer): DecodedObject {
  const reader = new MessageReader(bytes);
  return readEnvelopedObject(reader, bytes.length);
}

/** An envelope's TypeMeta and where its message lies (runtime.Unknown: typeMeta 1, raw 2, contentEncoding 3). */
export interface Envelope {
  apiVersion: string;
  kind: string;
  /** The message's bytes: [rawStart, rawEnd) of the reader's buffer. */
  rawStart: number;
  rawEnd: number;
}

/** The envelope from the reader's position to `end`; the reader is left at `end`. */
export function readEnvelope(reader: MessageReader, end: number): Envelope {
  if (end - reader.pos < ENVELOPE_MAGIC.length || !reader.atEnvelope()) throw new Error('protobuf object: no k8s envelope');
  reader.pos += ENVELOPE_MAGIC.length;
  let apiVersion = '';
  let kind = '';
  let rawStart = -1;
  let rawEnd = -1;
  let contentEncoding = '';
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === delimited(1)) {
      const typeEnd = reader.end();
      while (reader.pos < typeEnd) {
        const typeTag = reader.uint32();
        if (typeTag === delimited(1)) apiVersion = reader.text();
        else if (typeTag === delimited(2)) kind = reader.text();
        else reader.skipField(typeTag);
      }
      reader.ended(typeEnd);
    } else if (tag === delimited(2)) {
      // Read once the envelope is: its kind names the message.
      rawEnd = reader.end();
      rawStart = reader.pos;
      reader.pos = rawEnd;
    } else if (tag === delimited(3)) contentEncoding = reader.text();
    else reader.skipField(tag);
  }
  reader.ended(end);
  if (contentEncoding !== '') throw new Error(`protobuf object: content encoding ${contentEncoding} is not read`);
  if (rawStart < 0) throw new Error(`protobuf object: ${kind || 'an object'} without its message`);
  return { apiVersion, kind, rawStart, rawEnd };
}

/** The enveloped object from the reader's position to `end`. */
export function readEnvelopedObject(reader: MessageReader, end: number): DecodedObject {
  const { apiVersion, kind, rawStart, rawEnd } = readEnvelope(reader, end);
  reader.pos = rawStart;
  // PartialObjectMetadata, or a whole object from a server that ignored `as=` (every kind's field 1 is its ObjectMeta):
  // either way its metadata alone, which is what a metadata-only watch asked for.
  const object: DecodedObject = kind === 'Status' ? { apiVersion, kind, ...readStatus(reader, rawEnd) } : { apiVersion, kind, metadata: readObjectMetaField(reader, rawEnd) };
  // The envelope was read to its end (readEnvelope): the caller goes on from there.
  reader.pos = end;
  return object;
}

/** An object's ObjectMeta (its field 1, in PartialObjectMetadata as in every kind); the rest is skipped. */
export function readObjectMetaField(reader: MessageReader, end: number): V1ObjectMeta {
  let meta: V1ObjectMeta = {};
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === delimited(1)) meta = readObjectMeta(reader, reader.end());
    else reader.skipField(tag);
  }
  reader.ended(end);
  return meta;
}

/** ObjectMeta as its JSON reads: empty strings and a zero generation left out, fields in the JSON's order. */
function readObjectMeta(reader: MessageReader, end: number): V1ObjectMeta {
  const meta: Record<string, unknown> = {};
  while (reader.pos < end) {
    const tag = reader.uint32();
    const field = tag >>> 3;
    // 1-6: name, generateName, namespace, selfLink, uid, resourceVersion; Go leaves an empty one out of the JSON.
    if (tag === delimited(field) && field <= 6) {
      const value = reader.text();
      if (value !== '') meta[STRING_FIELDS[field - 1]!] = value;
      continue;
    }
    switch (tag) {
      case varint(7): {
        const generation = reader.int64Number();
        if (generation !== 0) meta.generation = generation;
        break;
      }
      case delimited(8): setTime(meta, 'creationTimestamp', readTime(reader, reader.end())); break;
      case delimited(9): setTime(meta, 'deletionTimestamp', readTime(reader, reader.end())); break;
      case varint(10): meta.deletionGracePeriodSeconds = reader.int64Number(); break;
      case delimited(11): readMapEntry(reader, reader.end(), (meta.labels ??= {}) as Record<string, string>); break;
      case delimited(12): readMapEntry(reader, reader.end(), (meta.annotations ??= {}) as Record<string, string>); break;
      case delimited(13): ((meta.ownerReferences ??= []) as V1OwnerReference[]).push(readOwnerReference(reader, reader.end())); break;
      case delimited(14): ((meta.finalizers ??= []) as string[]).push(reader.text()); break;
      // 17, managedFields (most of a pod's metadata bytes), and anything newer: skipped by length.
      default: reader.skipField(tag);
    }
  }
  reader.ended(end);
  return meta as V1ObjectMeta;
}

const STRING_FIELDS = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion'] as const;

function setTime(meta: Record<string, unknown>, name: string, time: string | undefined): void {
  if (time !== undefined) meta[name] = time;
}

/** The last time formatted: the objects of a watch share their creation seconds often. */
let lastTime = { seconds: Number.NaN, text: '' };

/** A metav1.Time as its JSON (RFC 3339, whole seconds, UTC); undefined for the zero time (an empty message). */
function readTime(reader: MessageReader, end: number): string | undefined {
  let seconds: number | undefined;
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === varint(1)) seconds = reader.int64Number();
    else reader.skipField(tag);
  }
  reader.ended(end);
  if (seconds === undefined) return undefined;
  if (seconds !== lastTime.seconds) lastTime = { seconds, text: `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z` };
  return lastTime.text;
}

function readMapEntry(reader: MessageReader, end: number, into: Record<string, string>): void {
  let key = '';
  let value = '';
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === delimited(1)) key = reader.text();
    else if (tag === delimited(2)) value = reader.text();
    else reader.skipField(tag);
  }
  reader.ended(end);
  into[key] = value;
}

/** An OwnerReference in its JSON's order (its field numbers are not). */
function readOwnerReference(reader: MessageReader, end: number): V1OwnerReference {
  let apiVersion = '';
  let kind = '';
  let name = '';
  let uid = '';
  let controller: boolean | undefined;
  let blockOwnerDeletion: boolean | undefined;
  while (reader.pos < end) {
    const tag = reader.uint32();
    switch (tag) {
      case delimited(1): kind = reader.text(); break;
      case delimited(3): name = reader.text(); break;
      case delimited(4): uid = reader.text(); break;
      case delimited(5): apiVersion = reader.text(); break;
      case varint(6): controller = reader.bool(); break;
      case varint(7): blockOwnerDeletion = reader.bool(); break;
      default: reader.skipField(tag);
    }
  }
  reader.ended(end);
  const reference: V1OwnerReference = { apiVersion, kind, name, uid };
  if (controller !== undefined) reference.controller = controller;
  if (blockOwnerDeletion !== undefined) reference.blockOwnerDeletion = blockOwnerDeletion;
  return reference;
}

/** A Status's fields a watch's ERROR event is read for (status, message, reason, code), as its JSON names them. */
function readStatus(reader: MessageReader, end: number): { status?: string; message?: string; reason?: string; code?: number } {
  const status: { status?: string; message?: string; reason?: string; code?: number } = {};
  while (reader.pos < end) {
    const tag = reader.uint32();
    switch (tag) {
      case delimited(2): status.status = reader.text(); break;
      case delimited(3): status.message = reader.text(); break;
      case delimited(4): status.reason = reader.text(); break;
      case varint(6): status.code = reader.int32(); break;
      default: reader.skipField(tag);
    }
  }
  reader.ended(end);
  return status;
}
