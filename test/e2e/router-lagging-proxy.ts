// A TLS proxy in front of the real API server that holds back every byte of watch responses for `lagMs`
// (ordinary requests pass at once): the router's cache then lags its own writes, as on a busy cluster.
// Frozen, it silently drops watch bytes and never ends a watch: a half-open connection neither side notices.
// cutNext() lets one request through to the API server and breaks its answer mid-body. holdWatches() and
// expireHeldWatches() open a gap after which the real API server answers 410 Gone to the resumed watch.
// cutNextWatch() breaks a watch after its first event; refuseWatchList() answers WatchLists as a server without them;
// ignoreWatchList() drops their initial-events-end bookmark, as from a server that took them for plain watches.
// pauseNextWatch() sends a watch's first event on and holds the rest until released.
import { createServer, type Server } from 'node:https';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentOptions } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { Agent } from 'undici';
import { selfSignedCertificate } from '../support/test-certificate.ts';

export interface LaggingProxy {
  kubeConfig: KubeConfig;
  /** Freezes (or thaws) every watch stream, open or new. */
  setFrozen(frozen: boolean): void;
  /** The next request that `match`es reaches the API server, but the connection breaks halfway through its answer. */
  cutNext(match: (method: string, path: string) => boolean): void;
  /** Breaks every open watch whose path `match`es and holds every new one (not sent on) until expireHeldWatches(): a gap. */
  holdWatches(match: (path: string) => boolean): void;
  /** The next watch that `match`es is broken right after its first event (a WatchList: before its initial state ends). */
  cutNextWatch(match: (path: string) => boolean): void;
  /** The next watch that `match`es sends its first event on, then holds the rest until the returned function is called. */
  pauseNextWatch(match: (path: string) => boolean): () => void;
  /**
   * Answers every WatchList (`sendInitialEvents`) with the API server's own 422 when its WatchList feature is off
   * (a server of this version cannot be started so); counts those requests.
   */
  refuseWatchList(refuse: boolean): void;
  watchListsRefused(): number;
  /**
   * Drops the initial-events-end bookmark from every JSON watch: the state comes, but never its end, as from a server
   * that took the WatchList for a plain watch (this API server defaults a plain watch from no resourceVersion to one).
   */
  ignoreWatchList(ignore: boolean): void;
  /** Watch requests held now. */
  heldWatches(): number;
  /**
   * Sends the held watches on from resourceVersion 1, older than any watch cache's window (a CRD's cache starts
   * at its creation): the API server answers 410 "too old resource version", as to a watch resumed too late.
   * Later watches pass as asked.
   */
  expireHeldWatches(): void;
  close(): Promise<void>;
}

/** What a kube-apiserver with the WatchList feature gate off answers a WatchList (its ListOptions validation). */
const WATCH_LIST_FORBIDDEN = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
  reason: 'Invalid',
  code: 422,
};

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host', 'content-length']);

/** Waits for the hold's end, then gives the watch's URL asking for resourceVersion 1. */
async function heldUntilExpired(url: string, hold: { held: number; release: Promise<void> }): Promise<string> {
  hold.held += 1;
  await hold.release;
  hold.held -= 1;
  const expired = new URL(url, 'https://proxy.invalid');
  expired.searchParams.set('resourceVersion', '1');
  return `${expired.pathname}${expired.search}`;
}

/** A JSON watch stream's chunks with every initial-events-end bookmark's line left out. */
async function* withoutInitialEventsEnd(body: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
  let rest = Buffer.alloc(0);
  for await (const chunk of body) {
    const lines = Buffer.concat([rest, chunk]);
    const end = lines.lastIndexOf(0x0a) + 1;
    rest = lines.subarray(end);
    const kept = lines.subarray(0, end).toString('utf8').split('\n').filter((line) => !line.includes('"k8s.io/initial-events-end":"true"'));
    if (end > 0) yield Buffer.from(kept.join('\n'));
  }
  if (rest.length > 0) yield rest;
}

export async function startLaggingProxy(upstreamConfig: KubeConfig, lagMs: number): Promise<LaggingProxy> {
  const tls: AgentOptions & { headers?: Record<string, string> } = {};
  await upstreamConfig.applyToHTTPSOptions(tls);
  const upstream = new URL(upstreamConfig.getCurrentCluster()?.server ?? '');
  const agent = new Agent({ connect: { ca: tls.ca, cert: tls.cert, key: tls.key } });
  const certificate = selfSignedCertificate('lagging-proxy');
  let frozen = false;
  let cut: ((method: string, path: string) => boolean) | undefined;
  let cutWatch: ((path: string) => boolean) | undefined;
  let pauseWatch: { match: (path: string) => boolean; released: Promise<void> } | undefined;
  let refusing = false;
  let refused = 0;
  let ignoring = false;
  /** Each open watch's path. */
  const openWatches = new Map<ServerResponse, string>();
  let hold: { match: (path: string) => boolean; held: number; release: Promise<void>; expire: () => void } | undefined;
  const server: Server = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const headers: Record<string, string> = { ...(tls.headers ?? {}) };
        for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && typeof v === 'string') headers[k] = v;
        const body = Buffer.concat(chunks);
        const watch = /[?&]watch=(true|1)/.test(req.url ?? '');
        if (refusing && /[?&]sendInitialEvents=true/.test(req.url ?? '')) {
          refused += 1;
          res.writeHead(422, { 'content-type': 'application/json' });
          res.end(JSON.stringify(WATCH_LIST_FORBIDDEN));
          return;
        }
        const path = watch && hold?.match(req.url ?? '/') ? await heldUntilExpired(req.url ?? '/', hold) : (req.url ?? '/');
        if (res.destroyed) return;
        const response = await agent.request({
          origin: upstream.origin,
          path,
          method: (req.method ?? 'GET') as 'GET',
          headers,
          body: body.length > 0 ? body : undefined,
          bodyTimeout: 0,
          headersTimeout: 0,
        });
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(response.headers)) if (!HOP_BY_HOP.has(k) && typeof v === 'string') out[k] = v;
        if (!watch && cut?.(req.method ?? 'GET', req.url ?? '/')) {
          cut = undefined;
          const answer = Buffer.from(await response.body.arrayBuffer());
          res.writeHead(response.statusCode, { ...out, 'content-length': String(answer.length) });
          res.write(answer.subarray(0, answer.length >> 1), () => res.destroy());
          return;
        }
        if (!watch) {
          res.writeHead(response.statusCode, out);
          for await (const chunk of response.body) res.write(chunk);
          res.end();
          return;
        }
        res.writeHead(response.statusCode, out);
        if (cutWatch?.(req.url ?? '/')) {
          cutWatch = undefined;
          let head = Buffer.alloc(0);
          for await (const chunk of response.body as AsyncIterable<Buffer>) {
            head = Buffer.concat([head, chunk]);
            const newline = head.indexOf(0x0a);
            if (newline >= 0) return void res.write(head.subarray(0, newline + 1), () => (res.destroy(), response.body.destroy()));
          }
          return void res.destroy();
        }
        if (pauseWatch?.match(req.url ?? '/')) {
          const { released } = pauseWatch;
          pauseWatch = undefined;
          res.on('close', () => response.body.destroy());
          // Everything after the first line waits for the release, then flows on in order.
          let head: Buffer | undefined = Buffer.alloc(0);
          let held: Buffer[] | undefined = [];
          void released.then(() => {
            for (const chunk of held ?? []) res.write(chunk);
            held = undefined;
          });
          for await (const chunk of response.body as AsyncIterable<Buffer>) {
            let rest = chunk;
            if (head) {
              head = Buffer.concat([head, chunk]);
              const newline = head.indexOf(0x0a);
              if (newline < 0) continue;
              res.write(head.subarray(0, newline + 1));
              rest = head.subarray(newline + 1);
              head = undefined;
            }
            if (held) held.push(rest);
            else res.write(rest);
          }
          return void res.end();
        }
        openWatches.set(res, req.url ?? '/');
        // Each chunk leaves lagMs after it arrived, in order: a delay, not a throughput limit.
        let last = Promise.resolve();
        res.on('close', () => (openWatches.delete(res), response.body.destroy()));
        const events = ignoring ? withoutInitialEventsEnd(response.body as AsyncIterable<Buffer>) : response.body;
        for await (const chunk of events) {
          if (frozen) continue;
          const due = Date.now() + lagMs;
          last = last.then(() => new Promise<void>((r) => setTimeout(r, Math.max(0, due - Date.now())))).then(() => void res.write(chunk));
        }
        await last;
        // A frozen watch is never ended: only the client's own watchdog can notice.
        if (!frozen) res.end();
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'proxy', server: `https://127.0.0.1:${port}`, caData: Buffer.from(certificate.cert).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'proxy' }],
    contexts: [{ name: 'proxy', cluster: 'proxy', user: 'proxy' }],
    currentContext: 'proxy',
  });
  return {
    kubeConfig,
    setFrozen: (value) => {
      frozen = value;
    },
    cutNext: (match) => {
      cut = match;
    },
    holdWatches: (match) => {
      let expire!: () => void;
      const release = new Promise<void>((r) => (expire = r));
      hold = { match, held: 0, release, expire };
      for (const [res, path] of openWatches) if (match(path)) res.destroy();
    },
    cutNextWatch: (match) => {
      cutWatch = match;
    },
    pauseNextWatch: (match) => {
      let release!: () => void;
      pauseWatch = { match, released: new Promise<void>((r) => (release = r)) };
      return release;
    },
    refuseWatchList: (value) => {
      refusing = value;
    },
    watchListsRefused: () => refused,
    ignoreWatchList: (value) => {
      ignoring = value;
    },
    heldWatches: () => hold?.held ?? 0,
    expireHeldWatches: () => {
      hold?.expire();
      hold = undefined;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await agent.close();
    },
  };
}
