// The webhook gateway's two servers: the admission port (HTTPS, TLS 1.2+, POST /admit/<hook> from
// admission-gateway.ts, the API server's client certificate required when configured, a serving certificate
// swapped while requests are in flight) and the ops port (plain HTTP /healthz, /readyz, /metrics for probes
// and Prometheus, which cannot present the API server's certificate).
import type { Registry } from 'prom-client';
import type { Logger } from '../lib/observability/logger.ts';
import { counter, gauge } from '../lib/observability/metrics.ts';
import { createServer, setServingCertificate, type KubeloopServer } from '../lib/server/index.ts';
import { inspectCertificate } from '../certs/inspect.ts';
import type { KeyPairPem } from '../certs/generate.ts';
import { registerAdmissionGateway, type GatewayOptions } from './gateway/admission-gateway.ts';
import { clientCertificateTlsOptions, requireApiServer, type ClientAuthentication } from './gateway/api-server-authentication.ts';
import { HOOK_GROUP_PATH_PREFIX, HOOK_PATH_PREFIX } from './base/hook-spec.ts';
import { registerWebhookMetrics } from './webhook-metrics.ts';

export interface WebhookServerOptions {
  logger: Logger;
  serving: KeyPairPem;
  bodyLimitBytes?: number;
  /** Extra readiness condition, e.g. the AdmissionHooks have synced. */
  ready?: () => boolean;
  metrics?: Registry;
  /** The AdmissionHook gateway (POST /admit/<hook>, /admit-namespaced/<group>). */
  gateway?: Omit<GatewayOptions, 'metrics'>;
  /** Accept only the API server (its webhook client certificate); absent: any TLS client. */
  clientAuth?: ClientAuthentication;
}

export interface WebhookServer extends KubeloopServer {
  /** /healthz, /readyz and /metrics over plain HTTP, to listen on its own port; closing follows the admission server's. */
  ops: KubeloopServer;
  /** Hot-swaps the serving certificate: new handshakes use it, open connections finish on the old one. */
  setServingCertificate(serving: KeyPairPem): void;
}

/**
 * kube-apiserver's webhook client keeps idle connections for Go's default 90 s (client-go's transport leaves
 * IdleConnTimeout unset). Idling out first would make it dial and handshake again after every quiet spell,
 * and a request sent as we close gets "EOF" and the failure policy: outlast it, so it always closes first.
 */
export const WEBHOOK_TIMEOUTS = { keepAliveMs: 100_000, idleMs: 120_000 } as const;

/**
 * HTTP/1.1 only, said over ALPN: kube-apiserver forces http/1.1 for Service webhooks (kubernetes#75791), so
 * an h2 offer would be used only by dev-mode loopback URLs and make the bench measure a path no cluster takes.
 * Nagle is already off: Node's HTTP(S) servers set TCP_NODELAY on accepted sockets (noDelay defaults to true).
 */
const ALPN_PROTOCOLS = ['http/1.1'];

export function createWebhookServer(options: WebhookServerOptions): WebhookServer {
  const { clientAuth } = options;
  const server = createServer({
    logger: options.logger,
    ...(options.bodyLimitBytes ? { bodyLimitBytes: options.bodyLimitBytes } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    serveMetrics: false,
    ready: () => (options.ready ? options.ready() : true),
    https: {
      key: options.serving.keyPem,
      cert: options.serving.certPem,
      minVersion: 'TLSv1.2',
      ALPNProtocols: ALPN_PROTOCOLS,
      ...(clientAuth ? clientCertificateTlsOptions(clientAuth) : {}),
    },
    timeouts: WEBHOOK_TIMEOUTS,
  });
  const { app, metrics } = server;
  const ops = createServer({ logger: options.logger, metrics, ready: () => !server.isClosing() && (options.ready ? options.ready() : true) });
  const certExpiry = gauge(metrics, 'kubeloop_webhook_serving_certificate_expiry_timestamp_seconds', 'notAfter of the certificate being served');
  const certSwaps = counter(metrics, 'kubeloop_webhook_serving_certificate_swaps_total', 'Serving certificates swapped in without a restart');
  const connections = counter(metrics, 'kubeloop_webhook_tls_connections_total', 'TLS connections accepted (API servers keep theirs alive; a steady climb means they do not)');
  app.server.on('secureConnection', () => connections.inc());
  if (clientAuth) {
    const refusals = counter<'reason'>(metrics, 'kubeloop_webhook_refused_callers_total', 'Callers refused as not the API server: failed handshake (no or unknown certificate), or a certificate name not accepted', ['reason']);
    requireApiServer(app, clientAuth, refusals);
  }
  registerWebhookMetrics(app, metrics, (route) => route.startsWith(HOOK_PATH_PREFIX) || route.startsWith(HOOK_GROUP_PATH_PREFIX));
  const recordExpiry = (certPem: string): void => certExpiry.set(inspectCertificate(certPem).notAfter.getTime() / 1000);
  recordExpiry(options.serving.certPem);

  if (options.gateway) registerAdmissionGateway(app, { ...options.gateway, metrics });
  return {
    ...server,
    ops,
    beginClosing() {
      server.beginClosing();
      ops.beginClosing();
    },
    setServingCertificate(serving: KeyPairPem) {
      setServingCertificate(app, { key: serving.keyPem, cert: serving.certPem, ...(clientAuth ? { ca: clientAuth.caPem } : {}) });
      recordExpiry(serving.certPem);
      certSwaps.inc();
      app.log.info({ notAfter: inspectCertificate(serving.certPem).notAfter.toISOString() }, 'serving certificate swapped');
    },
  };
}
