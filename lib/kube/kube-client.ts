// A small, fast Kubernetes HTTP client on undici: JSON requests, watch streams, QPS/burst limiting.
// A kubeconfig (ClusterCredentials) supplies TLS material and tokens; client-node's generated APIs cannot ask
// for PartialObjectMetadata or send arbitrary patch types to arbitrary resources, which the router needs.
import type { AgentOptions } from 'node:https';
import { Agent, type Dispatcher } from 'undici';
import type { Readable } from 'node:stream';
import { credentialHeaders, type ClusterCredentials } from './kube-config.ts';
import { TokenBucket, type RateLimit, type RequestLimiter } from './rate-limiter.ts';
import { Http2Unavailable, NodeHttp2Writes } from './node-http2-writes.ts';
import { headerText, replyBytes, replyErrorText, replyText, type BytesAnswer, type Reply } from './kube-reply.ts';
import { apiError, isApiError, KubeApiError, KubeClientClosedError } from './kube-api-error.ts';
import { guardUnownedHttp2Streams } from './unowned-http2-streams.ts';
import type { Impersonation } from './service-account-identity.ts';

export type QueryValue = string | number | boolean | undefined;

export interface KubeRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Absolute API path, e.g. /api/v1/namespaces/default/pods. */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** Defaults to application/json; patches set their own. */
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
  /** Time allowed for the response headers; the default suits ordinary requests, not watches. */
  timeoutMs?: number;
  /** Extra headers (the trace context of a write: traceparent); credentials and accept always win. */
  headers?: Record<string, string>;
}

export { AnswerError, KubeApiError, KubeClientClosedError, isApiError } from './kube-api-error.ts';

export interface KubeClientOptions {
  /** A QPS/burst of its own, or a limiter shared with others (the router's tenant budget). */
  rateLimit?: RateLimit | RequestLimiter;
  /** Default time allowed for ordinary responses. */
  requestTimeoutMs?: number;
  /** Time allowed for a connection and its TLS handshake (undici's default: 10 s). */
  connectTimeoutMs?: number;
  /** How long a bearer token read from the kubeconfig (file, exec plugin) is reused. */
  credentialTtlMs?: number;
  /** Told of every answered or failed request (client-go's rest_client_* metrics); impersonating clients share it. */
  onRequest?: (sample: KubeRequestSample) => void;
  /**
   * Offer HTTP/2 (ALPN) to the API server, as undici does by default: one multiplexed connection for all
   * watches and requests. `false` speaks HTTP/1.1 keep-alive; bench/kube-client-protocol.bench.ts measured
   * the same client CPU per request for both (0.99x over 4 alternating rounds).
   */
  http2?: boolean;
  /**
   * Writes (POST, PUT, PATCH, DELETE) over node:http2, cheaper per request (node-http2-writes.ts); off by default.
   * Only for an https server; one that does not choose h2 by ALPN gets them over undici, as without it.
   */
  http2Writes?: boolean;
}

/** One API request as client-go's REST client metrics see it: status code (or "<error>"), method, host, latency to the response headers. */
export interface KubeRequestSample {
  code: string;
  method: string;
  host: string;
  seconds: number;
}

export { serviceAccountGroups, serviceAccountUser, type Impersonation } from './service-account-identity.ts';
export type { BytesAnswer } from './kube-reply.ts';

/** An open stream and the media type the server answered in (its Content-Type, '' when it named none). */
export interface StreamResponse {
  body: Readable;
  contentType: string;
}

interface Credentials {
  headers: Record<string, string>;
  at: number;
}

export class KubeClient {
  readonly server: string;
  /**
   * One object per root client, shared by the clients impersonating through it: a WeakMap key for what was
   * learnt about the API server behind it (whether it serves WatchList, lib/kube/watch-list.ts).
   */
  readonly serverKey: object;
  readonly #kubeConfig: ClusterCredentials;
  readonly #origin: string;
  readonly #basePath: string;
  readonly #dispatcher: Agent;
  readonly #limiter: RequestLimiter;
  readonly #requestTimeoutMs: number;
  readonly #credentialTtlMs: number;
  readonly #onRequest: ((sample: KubeRequestSample) => void) | undefined;
  readonly #host: string;
  /** Set on clients made by impersonating(): they borrow the parent's connections and credentials. */
  readonly #parent: KubeClient | undefined;
  readonly #impersonationHeaders: Record<string, string>;
  /** With `http2Writes`: writes go over node:http2, reads and watches over undici. */
  readonly #writes: NodeHttp2Writes | undefined;
  #credentials: Credentials | undefined;
  /** Set on the root by close() or destroy(): its requests and its impersonating clients' fail with KubeClientClosedError. */
  #closed = false;
  /** The root's watch bodies still open: close() ends each with KubeClientClosedError (undici's close waited for them). */
  readonly #openStreams = new Map<Readable, KubeRequest>();

  private constructor(kubeConfig: ClusterCredentials, tls: AgentOptions, options: KubeClientOptions, parent?: KubeClient, impersonation?: Impersonation) {
    guardUnownedHttp2Streams();
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/+$/, '');
    // A server URL may carry a path prefix (behind a proxy); undici wants origin and path apart.
    const parsed = new URL(this.server);
    this.#origin = parsed.origin;
    this.#basePath = parsed.pathname === '/' ? '' : parsed.pathname;
    this.#host = parsed.host;
    this.#onRequest = options.onRequest;
    this.#kubeConfig = kubeConfig;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#credentialTtlMs = options.credentialTtlMs ?? 60_000;
    const limit = options.rateLimit ?? { qps: 50, burst: 100 };
    this.#limiter = 'take' in limit ? limit : new TokenBucket(limit);
    this.#parent = parent;
    this.serverKey = parent ? parent.serverKey : {};
    this.#impersonationHeaders = impersonation ? { 'impersonate-user': impersonation.user } : {};
    this.#dispatcher = parent ? parent.#dispatcher : new Agent({
      connect: {
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        ...(tls.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: tls.rejectUnauthorized }),
        ...(tls.servername ? { servername: tls.servername } : {}),
        ...(options.connectTimeoutMs === undefined ? {} : { timeout: options.connectTimeoutMs }),
      },
      keepAliveTimeout: 30_000,
      // Watches keep a connection each; ordinary requests reuse the rest.
      connections: null,
      allowH2: options.http2 ?? true,
    });
    const { ca, cert, key, rejectUnauthorized, servername } = tls;
    this.#writes = parent ? parent.#writes : options.http2Writes && parsed.protocol === 'https:' ? new NodeHttp2Writes(this.#origin, { ca, cert, key, rejectUnauthorized, servername }) : undefined;
  }

  static async fromKubeConfig(kubeConfig: ClusterCredentials, options: KubeClientOptions = {}): Promise<KubeClient> {
    const tls: AgentOptions & { headers?: Record<string, string> } = {};
    await kubeConfig.applyToHTTPSOptions(tls);
    const client = new KubeClient(kubeConfig, tls, options);
    client.#credentials = { headers: credentialHeaders(tls), at: Date.now() };
    return client;
  }

  /**
   * A client acting as `impersonation` (Impersonate-User) over this client's connections and credentials,
   * with its own rate limit (or its share of a limiter): one identity's requests never wait in another's bucket.
   */
  impersonating(impersonation: Impersonation, rateLimit: RateLimit | RequestLimiter): KubeClient {
    const root = this.#parent ?? this;
    return new KubeClient(root.#kubeConfig, {}, { rateLimit, requestTimeoutMs: root.#requestTimeoutMs, credentialTtlMs: root.#credentialTtlMs, ...(root.#onRequest ? { onRequest: root.#onRequest } : {}) }, root, impersonation);
  }

  /** The user this client impersonates, if any. */
  get impersonatedUser(): string | undefined {
    return this.#impersonationHeaders['impersonate-user'];
  }

  async #headers(): Promise<Record<string, string>> {
    if (this.#parent) return { ...(await this.#parent.#headers()), ...this.#impersonationHeaders };
    const cached = this.#credentials;
    if (cached && Date.now() - cached.at < this.#credentialTtlMs) return cached.headers;
    const opts: AgentOptions & { headers?: Record<string, string> } = {};
    await this.#kubeConfig.applyToHTTPSOptions(opts);
    this.#credentials = { headers: credentialHeaders(opts), at: Date.now() };
    return this.#credentials.headers;
  }

  /** The client owning the connections: an impersonating client's parent, else itself. */
  get #root(): KubeClient {
    return this.#parent ?? this;
  }

  async #send(request: KubeRequest, streaming: boolean): Promise<Reply> {
    if (this.#root.#closed) throw new KubeClientClosedError(request, false);
    await this.#limiter.take();
    const method = request.method ?? 'GET';
    const headers: Record<string, string> = {
      ...request.headers,
      ...(await this.#headers()),
      accept: request.accept ?? 'application/json',
    };
    // Closed while it waited for its turn or its credentials: never sent (undici's closed agent would say less).
    if (this.#root.#closed) throw new KubeClientClosedError(request, false);
    let body: string | undefined;
    if (request.body !== undefined) {
      headers['content-type'] = request.contentType ?? 'application/json';
      body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    }
    const timeout = request.timeoutMs ?? this.#requestTimeoutMs;
    const started = performance.now();
    const path = this.#basePath + pathWithQuery(request.path, request.query);
    const overUndici = () =>
      this.#dispatcher.request({
        origin: this.#origin,
        path,
        method,
        headers,
        body,
        signal: request.signal,
        headersTimeout: timeout,
        // A watch body is quiet for long stretches; the informer runs its own watchdog instead.
        bodyTimeout: streaming ? 0 : timeout,
      });
    const writes = this.#writes;
    const sending: Promise<Reply> =
      writes?.available && method !== 'GET' && !streaming
        ? writes.request({ method, path, headers, body, timeoutMs: timeout, signal: request.signal }).catch((error: unknown) => {
            // Not processed over HTTP/2 (a server or proxy without it: every later write goes over undici too).
            if (error instanceof Http2Unavailable) return overUndici();
            throw error;
          })
        : overUndici();
    if (!this.#onRequest) return sending;
    let code = '<error>';
    try {
      const response = await sending;
      code = String(response.statusCode);
      return response;
    } finally {
      this.#onRequest({ code, method, host: this.#host, seconds: (performance.now() - started) / 1000 });
    }
  }

  /** Sends a request and parses the JSON answer; throws KubeApiError on a non-2xx status. */
  async request<T>(request: KubeRequest): Promise<T> {
    const text = await this.requestText(request);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  /** The 2xx answer's text, unparsed (a paged list reads the next page's token from its head); KubeApiError else. */
  requestText(request: KubeRequest): Promise<string> {
    return this.#answer(request, replyText);
  }

  /** The 2xx answer's bytes in the media type the server chose among those `accept` offered (a list in protobuf). */
  requestBytes(request: KubeRequest): Promise<BytesAnswer> {
    return this.#answer(request, replyBytes);
  }

  async #answer<T>(request: KubeRequest, read: (reply: Reply) => Promise<T>): Promise<T> {
    let response: Reply;
    let refusal: string;
    try {
      response = await this.#send(request, false);
      if (response.statusCode >= 200 && response.statusCode < 300) return await read(response);
      refusal = await replyErrorText(response);
    } catch (error) {
      throw this.#closedInstead(request, error);
    }
    throw apiError(request, response, refusal);
  }

  /** A failure of a request the client's close() or destroy() cut short reads as such, whatever the transport said. */
  #closedInstead(request: KubeRequest, error: unknown): unknown {
    return this.#root.#closed && !(error instanceof KubeClientClosedError || error instanceof KubeApiError) ? new KubeClientClosedError(request, true, { cause: error }) : error;
  }

  /** GETs one object; undefined when it does not exist (404), any other failure throws. */
  async getIfExists<T>(request: Omit<KubeRequest, 'method' | 'body'>): Promise<T | undefined> {
    try {
      return await this.request<T>(request);
    } catch (error) {
      if (isApiError(error, 404)) return undefined;
      throw error;
    }
  }

  /** Opens a streaming request (a watch); the caller reads and destroys the body. */
  async stream(request: KubeRequest): Promise<Readable> {
    return (await this.streamResponse(request)).body;
  }

  /** As stream(), with the encoding the server chose among those `accept` offered (its Content-Type). */
  async streamResponse(request: KubeRequest): Promise<StreamResponse> {
    try {
      const response = (await this.#send(request, true)) as Dispatcher.ResponseData;
      if (response.statusCode >= 200 && response.statusCode < 300) return { body: this.#track(request, response.body), contentType: headerText(response.headers['content-type']) };
      throw apiError(request, response, await replyErrorText(response));
    } catch (error) {
      throw this.#closedInstead(request, error);
    }
  }

  /** Keeps an open watch body where close() finds it; one opened as the client closed ends at once. */
  #track(request: KubeRequest, body: Readable): Readable {
    const root = this.#root;
    if (root.#closed) return endBody(body, request);
    root.#openStreams.set(body, request);
    body.once('close', () => root.#openStreams.delete(body));
    return body;
  }

  /** Opens the connection writes take (with `http2Writes`) ahead of the first write; a no-op else, never fails. */
  warm(): void {
    this.#writes?.warm();
  }

  /**
   * Ends the client: every request still in flight (watches included) fails with KubeClientClosedError, and so does
   * every later one; then the connections close, HTTP/2 writes' session with a GOAWAY. undici's own close() waited
   * for requests in flight, an open watch for as long as it lasted.
   */
  async close(): Promise<void> {
    // An impersonating client borrows its parent's connections; the parent closes them.
    if (this.#parent) return;
    this.#cutInFlight();
    await Promise.all([this.#dispatcher.destroy(), this.#writes?.close()]);
  }

  /** As close(), without waiting for the HTTP/2 writes' session to close politely. */
  async destroy(): Promise<void> {
    if (this.#parent) return;
    this.#cutInFlight();
    this.#writes?.destroy();
    await this.#dispatcher.destroy();
  }

  #cutInFlight(): void {
    this.#closed = true;
    for (const [body, request] of this.#openStreams) endBody(body, request);
    this.#openStreams.clear();
  }
}

/** Ends a watch body with KubeClientClosedError; a caller that never listened for errors sees it end (as undici does). */
function endBody(body: Readable, request: KubeRequest): Readable {
  return body.on('error', () => {}).destroy(new KubeClientClosedError(request, true));
}

export function pathWithQuery(path: string, query?: Record<string, QueryValue>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined) params.set(key, String(value));
  }
  const search = params.toString();
  return search === '' ? path : `${path}?${search}`;
}
