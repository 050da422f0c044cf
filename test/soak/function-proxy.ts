// A small HTTP proxy in front of one function: passes reconcile requests to the (restartable) function
// process, and on demand answers 500s, garbage or hangs instead. Every request it sees goes through the
// ReconcileTracker, so two reconciles of one key in flight at once are caught.
import { createServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Misbehaviour } from './fault-plan.ts';
import { reconcileCallOf, type ReconcileTracker } from './reconcile-tracker.ts';

export interface FunctionProxy {
  name: string;
  /** http://127.0.0.1:<port>: what the Loop points at. */
  url: string;
  setUpstream(url: string): void;
  /** Misbehave until `untilMs` (Date.now() clock). */
  misbehave(mode: Misbehaviour, untilMs: number): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

export async function startFunctionProxy(name: string, upstream: string, tracker: ReconcileTracker, now: () => number): Promise<FunctionProxy> {
  let target = new URL(upstream);
  let mode: { kind: Misbehaviour; untilMs: number } | undefined;
  const agent = new Agent({ keepAlive: true });

  const forward = (req: IncomingMessage, res: ServerResponse, body: string, done: () => void): void => {
    const out = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host }, agent },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
        reply.on('end', done);
      },
    );
    out.on('error', (error) => {
      // The function is down (killed, restarting): what a router would see from a dead Service endpoint.
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `function ${name} unreachable: ${error.message}` }));
      done();
    });
    res.on('close', () => out.destroy());
    out.end(body);
  };

  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const call = reconcileCallOf(body);
      const end = call ? tracker.begin({ ...call, via: name, startMs: now() }) : () => {};
      // The router gave up (timeout) or the reply is out: either way this reconcile is over on its side.
      res.on('close', end);
      const active = mode && Date.now() < mode.untilMs ? mode : undefined;
      if (active?.kind === '500') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"injected failure"}');
      } else if (active?.kind === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"apiVersion": "kubeloop.dev/v1", "actions": [{"op"');
      } else if (active?.kind === 'hang') {
        // Hold the request until the window ends (the router's timeout usually ends it first), then answer.
        const timer = setTimeout(() => forward(req, res, body, end), Math.max(0, active.untilMs - Date.now()));
        res.on('close', () => clearTimeout(timer));
      } else {
        forward(req, res, body, end);
      }
    }, () => res.destroy());
  });
  // As long as fastify's (the real function servers): Node's 5 s default races the router's reuse of an idle socket.
  server.keepAliveTimeout = 72_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    name,
    url,
    setUpstream: (next) => {
      target = new URL(next);
    },
    misbehave: (kind, untilMs) => {
      mode = { kind, untilMs };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
