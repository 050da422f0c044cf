// A local TLS HTTP/2 stand-in for the API server's quiet watches: a list is an empty ConfigMapList, a watch stays
// open, and every 1000/rate ms one open watch in turn hears a bookmark, as the watch cache sends them at rest.
import http2 from 'node:http2';

export interface BookmarkServer {
  port: number;
  close(): Promise<void>;
}

/** A bookmark as the API server's watch cache writes it. */
const bookmarkLine = (resourceVersion: number): string => `{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"${resourceVersion}","creationTimestamp":null}}}\n`;

/** Serves on 127.0.0.1 with `cert` and `key`; `watches` sizes the connection's stream limit. */
export async function serveBookmarks(options: { cert: string | Buffer; key: string | Buffer; watches: number; rate: number }): Promise<BookmarkServer> {
  const open: http2.ServerHttp2Stream[] = [];
  const server = http2.createSecureServer({ cert: options.cert, key: options.key, settings: { maxConcurrentStreams: 10 * options.watches } }, (request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    if (!request.url.includes('watch=true')) response.end('{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1000"},"items":[]}');
    else open.push(response.stream);
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  let resourceVersion = 1000;
  let next = 0;
  const ticker = setInterval(() => {
    const watches = open.filter((stream) => !stream.closed);
    if (watches.length > 0) watches[next++ % watches.length]!.write(bookmarkLine(++resourceVersion));
  }, 1000 / options.rate);
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      clearInterval(ticker);
      for (const session of sessions) session.destroy();
      await new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}
