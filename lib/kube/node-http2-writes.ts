// API writes over Node's own HTTP/2 client (node:http2): one session, a stream per request. It costs less CPU per
// PATCH than undici's HTTP/2 (bench:api-client, docs/performance.md); watches and reads stay on undici.
import http2, { type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import type { SecureClientSessionOptions } from 'node:http2';

export interface Http2Reply {
  statusCode: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface Http2Request {
  method: string;
  /** Path with query, the server's path prefix included. */
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export class NodeHttp2Writes {
  readonly #origin: string;
  readonly #tls: SecureClientSessionOptions;
  #session: ClientHttp2Session | undefined;
  /** Streams open on the session: it holds the process open only while a request waits on it. */
  #open = 0;

  constructor(origin: string, tls: SecureClientSessionOptions) {
    this.#origin = origin;
    this.#tls = tls;
  }

  #connect(): ClientHttp2Session {
    const current = this.#session;
    if (current && !current.closed && !current.destroyed) return current;
    const session = http2.connect(this.#origin, this.#tls);
    // A session's errors end its streams, which report them to their requests; the next request reconnects.
    session.on('error', () => {});
    session.on('goaway', () => session.close());
    session.on('close', () => {
      if (this.#session === session) this.#session = undefined;
    });
    session.unref();
    this.#session = session;
    return session;
  }

  request(r: Http2Request): Promise<Http2Reply> {
    return new Promise<Http2Reply>((resolve, reject) => {
      const session = this.#connect();
      const headers: Record<string, string> = { ':method': r.method, ':path': r.path };
      // HTTP/2 header names are lower case.
      for (const [name, value] of Object.entries(r.headers)) headers[name.toLowerCase()] = value;
      const stream = session.request(headers, r.signal ? { signal: r.signal } : {});
      if (this.#open++ === 0) session.ref();
      let settled = false;
      const settle = () => {
        settled = true;
        if (--this.#open === 0 && !session.destroyed) session.unref();
      };
      let reply: Omit<Http2Reply, 'text'> = { statusCode: 0, headers: {} };
      const chunks: Buffer[] = [];
      stream.setTimeout(r.timeoutMs, () => stream.destroy(new Error(`${r.method} ${r.path}: no answer within ${r.timeoutMs} ms`)));
      stream.on('response', (responseHeaders) => {
        reply = { statusCode: Number(responseHeaders[':status']), headers: responseHeaders };
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.once('end', () => {
        if (settled) return;
        settle();
        resolve({ ...reply, text: Buffer.concat(chunks).toString('utf8') });
      });
      stream.once('error', (error) => {
        if (settled) return;
        settle();
        reject(error);
      });
      // Reset by the server or a closing session without an error event: never leave the request hanging.
      stream.once('close', () => {
        if (settled) return;
        settle();
        reject(new Error(`${r.method} ${r.path}: the HTTP/2 stream closed before its answer (code ${stream.rstCode})`));
      });
      stream.end(r.body);
    });
  }

  close(): Promise<void> {
    const session = this.#session;
    this.#session = undefined;
    if (!session || session.closed) return Promise.resolve();
    return new Promise((resolve) => session.close(() => resolve()));
  }

  destroy(): void {
    this.#session?.destroy();
    this.#session = undefined;
  }
}
