// The webhook gateway's HTTPS server: the shared fastify bootstrap (healthz/readyz/metrics, body limit,
// timeouts) with TLS 1.2+, POST /admit/<hook> (admission-gateway.ts), and a serving certificate that can
// be swapped while requests are in flight (rotation).
import type { Registry } from 'prom-client';
import type { Logger } from '../lib/observability/logger.ts';
import { counter, gauge } from '../lib/observability/metrics.ts';
import { createServer, setServingCertificate, type KubeloopServer } from '../lib/server/index.ts';
import { inspectCertificate } from '../certs/inspect.ts';
import type { KeyPairPem } from '../certs/generate.ts';
import { registerAdmissionGateway, type GatewayOptions } from './admission-gateway.ts';
import { HOOK_PATH_PREFIX } from './hook-spec.ts';
import { registerWebhookMetrics } from './webhook-metrics.ts';

export interface WebhookServerOptions {
  logger: Logger;
  serving: KeyPairPem;
  bodyLimitBytes?: number;
  /** Extra readiness condition, e.g. the AdmissionHooks have synced. */
  ready?: () => boolean;
  metrics?: Registry;
  /** The AdmissionHook gateway (POST /admit/<hook>). */
  gateway?: Omit<GatewayOptions, 'metrics'>;
}

export interface WebhookServer extends KubeloopServer {
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
  const server = createServer({
    logger: options.logger,
    ...(options.bodyLimitBytes ? { bodyLimitBytes: options.bodyLimitBytes } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ready: () => (options.ready ? options.ready() : true),
    https: { key: options.serving.keyPem, cert: options.serving.certPem, minVersion: 'TLSv1.2', ALPNProtocols: ALPN_PROTOCOLS },
    timeouts: WEBHOOK_TIMEOUTS,
  });
  const { app, metrics } = server;
  const certExpiry = gauge(metrics, 'kubeloop_webhook_serving_certificate_expiry_timestamp_seconds', 'notAfter of the certificate being served');
  const certSwaps = counter(metrics, 'kubeloop_webhook_serving_certificate_swaps_total', 'Serving certificates swapped in without a restart');
  const connections = counter(metrics, 'kubeloop_webhook_tls_connections_total', 'TLS connections accepted (API servers keep theirs alive; a steady climb means they do not)');
  app.server.on('secureConnection', () => connections.inc());
  registerWebhookMetrics(app, metrics, (route) => route.startsWith(HOOK_PATH_PREFIX));
  const recordExpiry = (certPem: string): void => certExpiry.set(inspectCertificate(certPem).notAfter.getTime() / 1000);
  recordExpiry(options.serving.certPem);

  if (options.gateway) registerAdmissionGateway(app, { ...options.gateway, metrics });
  return {
    ...server,
    setServingCertificate(serving: KeyPairPem) {
      setServingCertificate(app, { key: serving.keyPem, cert: serving.certPem });
      recordExpiry(serving.certPem);
      certSwaps.inc();
      app.log.info({ notAfter: inspectCertificate(serving.certPem).notAfter.toISOString() }, 'serving certificate swapped');
    },
  };
}
