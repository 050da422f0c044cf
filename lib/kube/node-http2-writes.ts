// API writes over Node's own HTTP/2 client (node:http2): one session, a stream per request. It costs less CPU per
// PATCH than undici's HTTP/2 (bench:api-client, docs/performance.md); watches and reads stay on undici.
import http2, { type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import type { SecureClientSessionOptions } from 'node:http2';

export interface Http2Reply {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The body whole, in the media type the server answered in (a write's reply may be protobuf). */
  bytes: Buffer;
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

/**
 * The request was not processed over HTTP/2: the server (or a proxy before it) does not speak it, or refused
 * the stream on two sessions in a row. Nothing was done; the caller sends it its other way (undici).
 */
export class Http2Unavailable extends Error {
  readonly code = 'ERR_KUBELOOP_HTTP2_UNAVAILABLE';
}

/** What a stream's failure means for its request. */
type Failure = { kind: 'retry' } | { kind: 'unavailable' } | { kind: 'fail'; error: Error };

export class NodeHttp2Writes {
  readonly #origin: string;
  readonly #tls: SecureClientSessionOptions;
  #session: ClientHttp2Session | undefined;
  /** Streams open on the session: it holds the process open only while a request waits on it. */
  #open = 0;
  /** Set once a session came up without h2 (ALPN): every later write goes the other way. */
  #unavailable = false;
  /** Set by close() and destroy(): no session opens again. */
  #closed = false;
  /** How to end each write in flight, for close() and destroy(): its own stream's events may never come then. */
  readonly #inFlight = new Set<() => void>();

  constructor(origin: string, tls: SecureClientSessionOptions) {
    this.#origin = origin;
    this.#tls = tls;
  }

  /** False once the server answered TLS without HTTP/2: the caller sends over its other client. */
  get available(): boolean {
    return !this.#unavailable;
  }

  #connect(): ClientHttp2Session {
    const current = this.#session;
    if (current && !current.closed && !current.destroyed) return current;
    const session = http2.connect(this.#origin, this.#tls);
    // A session's errors end its streams, which report them to their requests; the next request reconnects.
    session.on('error', (error) => {
      if (refusesHttp2(error)) this.#unavailable = true;
    });
    // Registered before any request's own: a server that ignored ALPN never sees a stream (they stay pending).
    session.once('connect', () => {
      if (session.alpnProtocol === 'h2' || session.alpnProtocol === 'h2c') return;
      this.#unavailable = true;
      session.destroy(new Http2Unavailable(`${this.#origin} did not choose h2 by ALPN`));
    });
    // GOAWAY (the API server's --goaway-chance, a restart): streams under way finish, new ones take a new session.
    session.on('goaway', () => session.close());
    session.on('close', () => {
      if (this.#session === session) this.#session = undefined;
    });
    session.unref();
    this.#session = session;
    return session;
  }

  /**
   * Opens the session ahead of the first write (the router calls it while its informers list), so the TLS
   * handshake is off the first label's path. Never throws: a session that fails is dropped as any other, and
   * the next write connects again; unref'd, it holds no process open, and close() ends it.
   */
  warm(): void {
    if (!this.#unavailable) this.#connect();
  }

  async request(r: Http2Request): Promise<Http2Reply> {
    // A stream the server refused (REFUSED_STREAM, above a GOAWAY's last stream) was not processed: once more, on a new session.
    const first = await this.#attempt(r);
    const outcome = first.kind === 'retry' ? await this.#attempt(r) : first;
    if (outcome.kind === 'reply') return outcome.reply;
    if (outcome.kind === 'fail') throw outcome.error;
    throw new Http2Unavailable(outcome.kind === 'retry' ? `${r.method} ${r.path}: refused by ${this.#origin} on two HTTP/2 sessions` : `${r.method} ${r.path}: ${this.#origin} does not speak HTTP/2`);
  }

  #attempt(r: Http2Request): Promise<{ kind: 'reply'; reply: Http2Reply } | Failure> {
    return new Promise((resolve) => {
      if (this.#closed) return resolve({ kind: 'fail', error: closedError(r) });
      if (this.#unavailable) return resolve({ kind: 'unavailable' });
      const session = this.#connect();
      const headers: Record<string, string> = { ':method': r.method, ':path': r.path };
      // HTTP/2 header names are lower case.
      for (const [name, value] of Object.entries(r.headers)) headers[name.toLowerCase()] = value;
      let stream: ClientHttp2Stream;
      try {
        // node:http2 ends a DELETE's stream with its headers unless told not to: its DeleteOptions (preconditions,
        // propagationPolicy) would never be sent, and stream.end(body) would fail with "write after end".
        stream = session.request(headers, { endStream: r.body === undefined, ...(r.signal ? { signal: r.signal } : {}) });
      } catch (error) {
        return resolve({ kind: 'fail', error: error as Error });
      }
      if (this.#open++ === 0) session.ref();
      let settled = false;
      const settle = (result: { kind: 'reply'; reply: Http2Reply } | Failure) => {
        if (settled) return;
        settled = true;
        this.#inFlight.delete(cut);
        if (--this.#open === 0 && !session.destroyed) session.unref();
        resolve(result);
      };
      // Closed under it: fails at once, and the stream is reset (the server stops; a pending one never leaves).
      const cut = () => {
        settle({ kind: 'fail', error: closedError(r) });
        stream.close(http2.constants.NGHTTP2_CANCEL);
      };
      this.#inFlight.add(cut);
      let reply: Omit<Http2Reply, 'bytes'> = { statusCode: 0, headers: {} };
      const chunks: Buffer[] = [];
      stream.setTimeout(r.timeoutMs, () => stream.destroy(withCode(new Error(`${r.method} ${r.path}: no answer within ${r.timeoutMs} ms`), 'ETIMEDOUT')));
      stream.on('response', (responseHeaders) => {
        reply = { statusCode: Number(responseHeaders[':status']), headers: responseHeaders };
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.once('end', () => settle({ kind: 'reply', reply: { ...reply, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) } }));
      // `on`, not `once`: a stream may be destroyed again (its session's error) after its first error.
      stream.on('error', (error) => settle(this.#failure(r, stream, error)));
      // Reset by the server or a closing session without an error event: never leave the request hanging. Every
      // stream closes, most after their answer: the error (and its stack) is built only for one that had none.
      stream.once('close', () => {
        if (!settled) settle(this.#failure(r, stream, withCode(new Error(`${r.method} ${r.path}: the HTTP/2 stream closed before its answer (code ${stream.rstCode})`), 'ECONNRESET')));
      });
      stream.end(r.body);
    });
  }

  /**
   * As undici's failures read to lib/kube/transient.ts: a stream that never left (still pending: no connection,
   * a failed handshake) fails with the connection's own error (ECONNREFUSED...), so "not sent" stays knowable.
   */
  #failure(r: Http2Request, stream: ClientHttp2Stream, error: Error & { cause?: unknown }): Failure {
    if (r.signal?.aborted) return { kind: 'fail', error: (r.signal.reason as Error | undefined) ?? error };
    // The stream may fail before its session reports why: the handshake's ALPN refusal is the stream's cause.
    if (stream.pending && (this.#unavailable || refusesHttp2(error.cause))) {
      this.#unavailable = true;
      return { kind: 'unavailable' };
    }
    if (stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM) return { kind: 'retry' };
    if (stream.pending && error.cause instanceof Error) return { kind: 'fail', error: error.cause };
    return { kind: 'fail', error };
  }

  /** Fails the writes in flight (ERR_KUBELOOP_CLIENT_CLOSED), then closes the session with a GOAWAY. */
  close(): Promise<void> {
    const session = this.#end();
    if (!session || session.closed || session.destroyed) return Promise.resolve();
    // Still connecting: nothing was sent on it, and its socket unrefs itself once connected, so the process could
    // run out of work before a graceful close ended and never see this resolve (exit code 13).
    if (session.connecting) {
      session.destroy();
      return Promise.resolve();
    }
    // Held open until it has closed, for the same reason (a router's stop then ended there, its last history
    // entries unwritten).
    session.ref();
    return new Promise((resolve) => session.close(() => resolve()));
  }

  destroy(): void {
    this.#end()?.destroy();
  }

  #end(): ClientHttp2Session | undefined {
    this.#closed = true;
    for (const cut of [...this.#inFlight]) cut();
    const session = this.#session;
    this.#session = undefined;
    return session;
  }
}

/** A TLS server that offers ALPN without h2 ends the handshake with this alert (Node's own https server does). */
function refusesHttp2(error: unknown): boolean {
  return error instanceof Http2Unavailable || (error as { code?: unknown } | undefined)?.code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL';
}

/** What a write the client's close cut reports: KubeClient tells it as KubeClientClosedError. */
function closedError(r: Http2Request): Error {
  return withCode(new Error(`${r.method} ${r.path}: the HTTP/2 session for writes was closed`), 'ERR_KUBELOOP_CLIENT_CLOSED');
}

function withCode(error: Error, code: string): Error {
  return Object.assign(error, { code });
}
