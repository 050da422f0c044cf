// An HTTPS server for an aggregated API (an APIService): it trusts the API server's front-proxy client
// certificate, as kube-system's extension-apiserver-authentication names it (read again every few minutes, as
// the API server may rotate it), refuses everyone else with a Status, and tells each route who the caller is.
import type { TLSSocket } from 'node:tls';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { UserInfo } from '../kube/access-review.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import { peerCertificate } from './client-certificate.ts';
import { createServer, listen, setServingCertificate, type KubeloopServer } from './create-server.ts';
import { decideCaller, readRequestHeaderConfig, type RequestHeaderConfig } from './front-proxy.ts';

export interface AggregatedApiServerOptions {
  /** Reads the requestheader ConfigMap (its ServiceAccount needs extension-apiserver-authentication-reader). */
  client: KubeClient;
  logger: Logger;
  /** The serving certificate the APIService's caBundle trusts. */
  tls: { certPem: string; keyPem: string };
  /** A refusal as the API's own Status (its group in details). */
  status(code: 401 | 403, reason: string, message: string): { code: number };
  /** How often the requestheader CA is read again; 5 minutes by default. */
  refreshMs?: number;
  /** A caller trusted otherwise (a replica passing on what the front proxy told it): who it vouches for; undefined: decide as usual. */
  vouchedFor?(request: FastifyRequest, config: RequestHeaderConfig): { user: UserInfo | undefined } | undefined;
}

export interface AggregatedApiServer {
  server: KubeloopServer;
  /** The user the API server named; undefined for its own discovery and availability calls. */
  userOf(request: FastifyRequest): UserInfo | undefined;
  /** The requestheader settings in force (the user headers a forwarded request carries). */
  requestHeaderConfig(): RequestHeaderConfig;
  listen(where: { port: number; host?: string }): Promise<string>;
  close(): Promise<void>;
}

export async function createAggregatedApiServer(options: AggregatedApiServerOptions): Promise<AggregatedApiServer> {
  const { client, logger } = options;
  let config = await readRequestHeaderConfig(client);
  const server = createServer({
    logger,
    serveMetrics: false,
    // The handshake asks for a certificate but does not require one: a caller without it gets a Status that says why.
    https: { key: options.tls.keyPem, cert: options.tls.certPem, ca: config.caPem, requestCert: true, rejectUnauthorized: false },
  });
  const users = new WeakMap<FastifyRequest, UserInfo>();
  server.app.addHook('onRequest', async (request, reply) => {
    const vouched = options.vouchedFor?.(request, config);
    if (vouched) {
      if (vouched.user) users.set(request, vouched.user);
      return;
    }
    const decision = decideCaller(peerCertificate(request.raw.socket as TLSSocket), request.raw.headersDistinct, config);
    if (!decision.ok) {
      request.log.warn({ statusCode: decision.code, message: decision.message }, 'aggregated API caller refused');
      const status = options.status(decision.code, decision.reason, decision.message);
      return reply.code(status.code).send(status);
    }
    if (decision.user) users.set(request, decision.user);
  });
  const refresh = setInterval(() => {
    readRequestHeaderConfig(client)
      .then((next) => {
        if (next.caPem !== config.caPem) setServingCertificate(server.app, { key: options.tls.keyPem, cert: options.tls.certPem, ca: next.caPem });
        config = next;
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'could not read the requestheader configuration again; keeping the last one'));
  }, options.refreshMs ?? 5 * 60_000);
  refresh.unref();
  return {
    server,
    userOf: (request) => users.get(request),
    requestHeaderConfig: () => config,
    listen: (where) => listen(server.app, where),
    close: async () => {
      clearInterval(refresh);
      await server.app.close();
    },
  };
}
