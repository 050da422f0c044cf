import { connect } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcMessages, startOtlpGrpcReceiver, TRACE_EXPORT_PATH, type OtlpGrpcReceiver } from './otlp-grpc.ts';
import { TraceStore } from './trace-store.ts';

let receiver: OtlpGrpcReceiver;
const store = new TraceStore();

beforeAll(async () => void (receiver = await startOtlpGrpcReceiver(store)));
afterAll(async () => receiver?.close());

function exportRequest(name: string): { traceId: string; bytes: Uint8Array } {
  const exporter = new InMemorySpanExporter();
  const span = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }).getTracer('t').startSpan(name);
  span.end();
  return { traceId: span.spanContext().traceId, bytes: ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())! };
}

const frame = (message: Uint8Array, compressed = false) => {
  const prefix = Buffer.alloc(5);
  prefix[0] = compressed ? 1 : 0;
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
};

/** One unary call over h2c, as a gRPC client makes it; resolves with the grpc-status (trailers, or trailers-only headers). */
function call(path: string, body: Buffer, headers: Record<string, string> = {}): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://${receiver.endpoint}`);
    session.on('error', reject);
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...headers });
    let status: string | undefined;
    stream.on('response', (h) => (status = h['grpc-status'] as string | undefined));
    stream.on('trailers', (t) => (status = t['grpc-status'] as string | undefined));
    stream.on('data', () => {});
    stream.on('end', () => {
      session.close();
      resolve(status);
    });
    stream.end(body);
  });
}

describe('the OTLP/gRPC receiver', () => {
  it('stores the spans of an Export call and answers OK, gzip-compressed messages included', async () => {
    const plain = exportRequest('GET /api/v1/pods');
    expect(await call(TRACE_EXPORT_PATH, frame(plain.bytes))).toBe('0');
    expect(store.get(plain.traceId)?.[0]?.name).toBe('GET /api/v1/pods');
    const zipped = exportRequest('POST /api/v1/namespaces/default/pods');
    expect(await call(TRACE_EXPORT_PATH, frame(gzipSync(zipped.bytes), true), { 'grpc-encoding': 'gzip' })).toBe('0');
    expect(store.get(zipped.traceId)).toHaveLength(1);
  });

  it('answers INVALID_ARGUMENT to a body that is not an export, and UNIMPLEMENTED to another method', async () => {
    expect(await call(TRACE_EXPORT_PATH, frame(Buffer.from([0x0a, 0xff])))).toBe('3');
    expect(await call('/grpc.health.v1.Health/Check', frame(Buffer.alloc(0)))).toBe('12');
  });
});

describe('grpcMessages', () => {
  it('refuses a message cut short', () => {
    expect(() => grpcMessages(frame(Buffer.from('abc')).subarray(0, 6), undefined)).toThrow('cut short');
  });
});
