// OTLP/gRPC into the console's trace store: what kube-apiserver's tracing exports (its TracingConfiguration
// names a gRPC endpoint only), so the API server's spans join kubeloop's in the waterfall. gRPC's unary call
// is small enough to serve with node:http2 (h2c, length-prefixed messages, a grpc-status trailer) instead of
// a gRPC library. Loopback only; a browser cannot speak HTTP/2 without TLS, so no page can reach it.
import { createServer, type Http2Server, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeOtlpProtobuf, OtlpDecodeError } from './otlp-decode.ts';
import type { TraceStore } from './trace-store.ts';

export const TRACE_EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
/** Larger requests are refused (RESOURCE_EXHAUSTED), as a collector's default 4 MiB limit does. */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

export interface OtlpGrpcReceiver {
  /** host:port, as a TracingConfiguration's endpoint names it. */
  endpoint: string;
  close(): Promise<void>;
}

/** The messages of a gRPC request body: each a compressed flag, a 4-byte length, the bytes. */
export function grpcMessages(body: Buffer, encoding: string | undefined): Buffer[] {
  const messages: Buffer[] = [];
  let pos = 0;
  while (pos < body.length) {
    if (pos + 5 > body.length) throw new OtlpDecodeError('a gRPC message prefix cut short');
    const compressed = body[pos] === 1;
    const length = body.readUInt32BE(pos + 1);
    if (pos + 5 + length > body.length) throw new OtlpDecodeError('a gRPC message cut short');
    const bytes = body.subarray(pos + 5, pos + 5 + length);
    if (compressed && encoding !== 'gzip') throw new OtlpDecodeError(`compressed with "${encoding ?? 'nothing named'}": only gzip is accepted`);
    messages.push(compressed ? gunzipSync(bytes) : bytes);
    pos += 5 + length;
  }
  return messages;
}

function finish(stream: ServerHttp2Stream, status: number, message?: string): void {
  if (stream.destroyed) return;
  if (status !== 0) {
    // Trailers-only answer: the status in the headers, no body.
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(status), 'grpc-message': encodeURIComponent(message ?? '') }, { endStream: true });
    return;
  }
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  // One empty ExportTraceServiceResponse: full success.
  stream.end(Buffer.from([0, 0, 0, 0, 0]));
}

export async function startOtlpGrpcReceiver(store: TraceStore, host = '127.0.0.1', port = 0): Promise<OtlpGrpcReceiver> {
  const server: Http2Server = createServer();
  const sessions = new Set<Http2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    if (headers[':path'] !== TRACE_EXPORT_PATH) return finish(stream, 12, `${String(headers[':path'])}: only ${TRACE_EXPORT_PATH} is served`);
    if (!String(headers['content-type'] ?? '').startsWith('application/grpc')) return finish(stream, 3, 'content-type must be application/grpc');
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) return finish(stream, 8, `a request over ${MAX_REQUEST_BYTES} bytes`);
      chunks.push(chunk);
    });
    stream.on('end', () => {
      if (size > MAX_REQUEST_BYTES) return;
      try {
        for (const message of grpcMessages(Buffer.concat(chunks), headers['grpc-encoding'] as string | undefined)) store.add(decodeOtlpProtobuf(message));
        finish(stream, 0);
      } catch (error) {
        finish(stream, 3, `not an OTLP trace export: ${(error as Error).message}`);
      }
    });
    stream.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    endpoint: `${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Exporters keep their HTTP/2 session open: end them, or close waits for them.
        for (const session of sessions) session.destroy();
      }),
  };
}
