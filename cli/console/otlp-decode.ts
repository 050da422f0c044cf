// OTLP trace export requests (ExportTraceServiceRequest, opentelemetry/proto/trace/v1) decoded into the
// console's spans, from protobuf (what kubeloop's exporters and the Go SDK send) or from OTLP/JSON. The
// protobuf subset is small (a dozen fields), so a reader of the wire format here beats a codegen dependency.
import type { AttributeValue, TraceSpan } from './trace-model.ts';

/** Bad input: the receiver answers 400 with its message. */
export class OtlpDecodeError extends Error {}

interface Field {
  number: number;
  wire: number;
  /** Varint or fixed value (wire 0, 1, 5). */
  int?: bigint;
  /** Length-delimited bytes (wire 2). */
  bytes?: Uint8Array;
}

/** The top-level fields of one protobuf message, in order. */
export function readFields(buf: Uint8Array): Field[] {
  const fields: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (pos >= buf.length || shift > 63n) throw new OtlpDecodeError('truncated or overlong varint');
      const byte = buf[pos++] as number;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
  };
  const fixed = (bytes: number): bigint => {
    if (pos + bytes > buf.length) throw new OtlpDecodeError('truncated fixed-width field');
    let result = 0n;
    for (let i = bytes - 1; i >= 0; i--) result = (result << 8n) | BigInt(buf[pos + i] as number);
    pos += bytes;
    return result;
  };
  while (pos < buf.length) {
    const tag = Number(varint());
    const number = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) fields.push({ number, wire, int: varint() });
    else if (wire === 1) fields.push({ number, wire, int: fixed(8) });
    else if (wire === 5) fields.push({ number, wire, int: fixed(4) });
    else if (wire === 2) {
      const length = Number(varint());
      if (pos + length > buf.length) throw new OtlpDecodeError('truncated length-delimited field');
      fields.push({ number, wire, bytes: buf.subarray(pos, pos + length) });
      pos += length;
    } else throw new OtlpDecodeError(`unsupported wire type ${wire} (field ${number})`);
  }
  return fields;
}

const utf8 = new TextDecoder();
const hex = (bytes: Uint8Array | undefined) => Array.from(bytes ?? [], (b) => b.toString(16).padStart(2, '0')).join('');
const messages = (fields: Field[], n: number) => fields.filter((f) => f.number === n && f.bytes).map((f) => f.bytes as Uint8Array);
const first = (fields: Field[], n: number) => fields.find((f) => f.number === n);
const text = (fields: Field[], n: number) => {
  const f = first(fields, n);
  return f?.bytes ? utf8.decode(f.bytes) : '';
};
const toSigned = (v: bigint) => (v >= 1n << 63n ? v - (1n << 64n) : v);
/** Nanoseconds since the epoch to microseconds (exact below 2^53 us, i.e. until the year 2255). */
const micros = (ns: bigint | undefined) => Number((ns ?? 0n) / 1000n);

function anyValue(buf: Uint8Array): AttributeValue {
  const f = readFields(buf)[0];
  if (!f) return '';
  switch (f.number) {
    case 1:
      return utf8.decode(f.bytes ?? new Uint8Array());
    case 2:
      return f.int === 1n;
    case 3:
      return Number(toSigned(f.int ?? 0n));
    case 4:
      return new DataView(new BigUint64Array([f.int ?? 0n]).buffer).getFloat64(0, true);
    case 5:
      return JSON.stringify(messages(readFields(f.bytes ?? new Uint8Array()), 1).map(anyValue));
    case 6:
      return JSON.stringify(attributesOf(messages(readFields(f.bytes ?? new Uint8Array()), 1)));
    default:
      return hex(f.bytes);
  }
}

function attributesOf(keyValues: Uint8Array[]): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of keyValues) {
    const fields = readFields(kv);
    const value = messages(fields, 2)[0];
    out[text(fields, 1)] = value ? anyValue(value) : '';
  }
  return out;
}

function spanFromProtobuf(buf: Uint8Array, service: string): TraceSpan {
  const f = readFields(buf);
  const start = micros(first(f, 7)?.int);
  const parent = hex(first(f, 4)?.bytes);
  const status = messages(f, 15)[0];
  const statusFields = status ? readFields(status) : [];
  const span: TraceSpan = {
    traceId: hex(first(f, 1)?.bytes),
    spanId: hex(first(f, 2)?.bytes),
    name: text(f, 5),
    service,
    startUs: start,
    durationUs: Math.max(0, micros(first(f, 8)?.int) - start),
    attributes: attributesOf(messages(f, 9)),
    events: messages(f, 11).map((event) => {
      const e = readFields(event);
      return { name: text(e, 2), atUs: micros(first(e, 1)?.int), attributes: attributesOf(messages(e, 3)) };
    }),
  };
  if (parent !== '') span.parentSpanId = parent;
  // Status code 2 is ERROR.
  if (first(statusFields, 3)?.int === 2n) span.error = { message: text(statusFields, 2) };
  return span;
}

/** Spans of an ExportTraceServiceRequest in protobuf. */
export function decodeOtlpProtobuf(buf: Uint8Array): TraceSpan[] {
  const spans: TraceSpan[] = [];
  for (const resourceSpans of messages(readFields(buf), 1)) {
    const rs = readFields(resourceSpans);
    const resource = messages(rs, 1)[0];
    const service = String((resource ? attributesOf(messages(readFields(resource), 1)) : {})['service.name'] ?? 'unknown');
    for (const scopeSpans of messages(rs, 2)) for (const span of messages(readFields(scopeSpans), 2)) spans.push(spanFromProtobuf(span, service));
  }
  return spans;
}

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
  kvlistValue?: { values?: JsonKeyValue[] };
}
interface JsonKeyValue {
  key: string;
  value?: JsonAnyValue;
}
interface JsonSpan {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: JsonKeyValue[];
  events?: Array<{ name?: string; timeUnixNano?: string | number; attributes?: JsonKeyValue[] }>;
  status?: { code?: number | string; message?: string };
}

function jsonValue(v: JsonAnyValue | undefined): AttributeValue {
  if (!v) return '';
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return JSON.stringify((v.arrayValue.values ?? []).map(jsonValue));
  if (v.kvlistValue) return JSON.stringify(jsonAttributes(v.kvlistValue.values));
  return '';
}
const jsonAttributes = (kvs: JsonKeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));
const jsonMicros = (ns: string | number | undefined) => micros(BigInt(ns ?? 0));

/** Spans of an ExportTraceServiceRequest in OTLP/JSON (ids in hex, as the specification's JSON mapping says). */
export function decodeOtlpJson(body: unknown): TraceSpan[] {
  const resourceSpans = (body as { resourceSpans?: unknown } | null)?.resourceSpans;
  if (!Array.isArray(resourceSpans)) throw new OtlpDecodeError('an OTLP/JSON trace export has a resourceSpans array');
  const spans: TraceSpan[] = [];
  for (const rs of resourceSpans as Array<{ resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: Array<{ spans?: JsonSpan[] }> }>) {
    const service = String(jsonAttributes(rs.resource?.attributes)['service.name'] ?? 'unknown');
    for (const scope of rs.scopeSpans ?? []) {
      for (const s of scope.spans ?? []) {
        const start = jsonMicros(s.startTimeUnixNano);
        const span: TraceSpan = {
          traceId: s.traceId ?? '',
          spanId: s.spanId ?? '',
          name: s.name ?? '',
          service,
          startUs: start,
          durationUs: Math.max(0, jsonMicros(s.endTimeUnixNano) - start),
          attributes: jsonAttributes(s.attributes),
          events: (s.events ?? []).map((e) => ({ name: e.name ?? '', atUs: jsonMicros(e.timeUnixNano), attributes: jsonAttributes(e.attributes) })),
        };
        if (s.parentSpanId) span.parentSpanId = s.parentSpanId;
        if (s.status?.code === 2 || s.status?.code === 'STATUS_CODE_ERROR') span.error = { message: s.status.message ?? '' };
        spans.push(span);
      }
    }
  }
  return spans;
}
