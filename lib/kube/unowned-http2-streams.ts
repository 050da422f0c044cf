// Ends the HTTP/2 client streams no request owns, before they can end the process. undici aborts an HTTP/2 request
// whose headers have not finished leaving by closing its stream and destroying it at once, which drops the deferred
// RST_STREAM: the API server still answers, and Node makes a new client stream for that answer, with no listener.
import { subscribe } from 'node:diagnostics_channel';
import http2, { type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';

let guarded = false;

/**
 * Once per process: a client stream Node made for headers this side never asked for is given an 'error' listener and
 * reset (CANCEL, so the API server stops the watch or list it was answering). Left alone it lived as long as its
 * session, and undici destroys a closing session with an error (ClientDestroyedError): emitted on that stream with no
 * listener, it was an uncaught exception (a webhook exited 1 on SIGTERM while a request had just been aborted).
 */
export function guardUnownedHttp2Streams(): void {
  if (guarded) return;
  guarded = true;
  subscribe('http2.client.stream.created', (message) => {
    const { stream, headers } = message as { stream: ClientHttp2Stream; headers?: IncomingHttpHeaders };
    // A stream this process opened is published with its request's headers, a server push with its promise's: both
    // name a :method. One made for an answer (or trailers) to a stream already gone names none.
    if (headers?.[':method'] !== undefined) return;
    stream.on('error', () => {});
    stream.resume();
    stream.close(http2.constants.NGHTTP2_CANCEL);
  });
}
