// The function runtime's transports for HTTP tests: fastify, the node:http server function images run and the
// Node handler on real sockets, and the Web fetch handler called directly, each sending a request and returning
// a plain answer.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { FunctionDefinition } from '../../lib/sdk/define-function.ts';
import { serveFunction, serveNodeFunction, toFetchHandler, toNodeHandler, type FunctionServerOptions, type ServedFunction, type ServedNodeFunction } from '../../lib/runtime/index.ts';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}
export type Send = (method: string, path: string, headers: Record<string, string>, body?: string) => Promise<Answer>;

async function overSocket(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const reply = await request(`${base}${path}`, { method: method as 'POST', headers, ...(body === undefined ? {} : { body }) });
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.headers)) if (typeof value === 'string') out[name] = value;
  return { status: reply.statusCode, headers: out, body: await reply.body.text() };
}

export interface ThreeTransports {
  /** Usable in describe.each at collection time; the sends work once start() resolved. */
  transports: Array<[string, Send]>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export function threeTransports(definition: FunctionDefinition, options: FunctionServerOptions): ThreeTransports {
  let served: ServedFunction | undefined;
  let image: ServedNodeFunction | undefined;
  let nodeServer: Server | undefined;
  let nodeBase = '';
  const fetchHandler = toFetchHandler(definition, options);
  const viaFetch: Send = async (method, path, headers, body) => {
    const reply = await fetchHandler(new Request(`http://function.local${path}`, { method, headers, ...(body === undefined ? {} : { body }) }));
    const out: Record<string, string> = {};
    reply.headers.forEach((value, name) => (out[name] = value));
    return { status: reply.status, headers: out, body: await reply.text() };
  };
  return {
    transports: [
      ['fastify server', (m, p, h, b) => overSocket(served?.url ?? '', m, p, h, b)],
      ['node:http server (images)', (m, p, h, b) => overSocket(image?.url ?? '', m, p, h, b)],
      ['Node handler', (m, p, h, b) => overSocket(nodeBase, m, p, h, b)],
      ['fetch handler', viaFetch],
    ],
    start: async () => {
      served = await serveFunction(definition, { port: 0, host: '127.0.0.1', ...options });
      image = await serveNodeFunction(definition, { port: 0, host: '127.0.0.1', ...options });
      const server = createServer(toNodeHandler(definition, options));
      nodeServer = server;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      nodeBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: async () => {
      await served?.close();
      await image?.close();
      await new Promise((resolve) => (nodeServer ? nodeServer.close(resolve) : resolve(undefined)));
    },
  };
}
