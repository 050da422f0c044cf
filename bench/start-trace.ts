// BENCH_START_TRACE=1: the router child's start-up as a timeline on stderr (connections, TLS handshakes, each API
// request and function call sent, answered and its first body chunk), from diagnostics channels, absolute ms; then
// its CPU at every hundredth PATCH, so a run's CPU per pod can be read as it goes (the warm-up against the rest).
import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

/** One line per step: `start-trace <epoch ms> <router CPU ms> <what>`, read by the bench's report of that round. */
function mark(what: string): void {
  const cpu = process.cpuUsage();
  process.stderr.write(`start-trace ${(performance.timeOrigin + performance.now()).toFixed(1)} ${((cpu.user + cpu.system) / 1000).toFixed(1)} ${what}\n`);
}

interface UndiciRequest {
  method: string;
  origin?: string;
  path: string;
}

/** Until this many lines, so a trace holds the start and the first calls and PATCHes, not the run. */
const LIMIT = 260;
/** Past the start, one line per this many PATCH streams: the router's CPU as the labels go out. */
const PATCH_STEP = 100;

export function startTrace(): { mark: (what: string) => void } | undefined {
  if (process.env.BENCH_START_TRACE !== '1') return undefined;
  let lines = 0;
  const limited = (what: string) => {
    if (++lines <= LIMIT) mark(what);
  };
  const ids = new WeakMap<object, number>();
  const chunked = new WeakSet<object>();
  let next = 0;
  const name = (request: UndiciRequest) => {
    let id = ids.get(request);
    if (id === undefined) ids.set(request, (id = ++next));
    return `#${id} ${request.method} ${request.origin ?? ''}${request.path.slice(0, 140)}`;
  };
  subscribe('undici:client:beforeConnect', (m) => limited(`undici connect ${(m as { connectParams: { host: string } }).connectParams.host}`));
  subscribe('undici:client:connected', (m) => limited(`undici connected (TLS done) ${(m as { connectParams: { host: string } }).connectParams.host}`));
  subscribe('undici:request:create', (m) => limited(`request ${name((m as { request: UndiciRequest }).request)}`));
  subscribe('undici:client:sendHeaders', (m) => limited(`sent ${name((m as { request: UndiciRequest }).request)}`));
  subscribe('undici:request:headers', (m) => {
    const { request, response } = m as { request: UndiciRequest; response: { statusCode: number } };
    limited(`answered ${response.statusCode} ${name(request)}`);
  });
  subscribe('undici:request:bodyChunkReceived', (m) => {
    const { request } = m as { request: UndiciRequest };
    if (chunked.has(request)) return;
    chunked.add(request);
    limited(`first body chunk ${name(request)}`);
  });
  subscribe('undici:request:trailers', (m) => limited(`done ${name((m as { request: UndiciRequest }).request)}`));
  // node:http2 (the writes): its socket, the TLS handshake, each stream.
  subscribe('net.client.socket', (m) => {
    const socket = (m as { socket: Socket }).socket;
    limited(`net socket ${socket.constructor.name}`);
    socket.once('secureConnect', () => limited('net socket TLS done'));
  });
  let patches = 0;
  subscribe('http2.client.stream.created', (m) => {
    const { stream, headers } = m as { stream: object; headers: Record<string, string> };
    if (headers[':method'] === 'PATCH' && ++patches % PATCH_STEP === 0) mark(`PATCH streams ${patches}`);
    limited(`h2 stream created ${headers[':method']} ${String(headers[':path']).slice(0, 140)} (session connecting: ${(stream as { session?: { connecting: boolean } }).session?.connecting})`);
  });
  subscribe('http2.client.stream.finish', (m) => {
    const { headers } = m as { headers: Record<string, string> };
    limited(`h2 stream answered ${headers[':status']}`);
  });
  mark('main() after the restore');
  return { mark };
}
