// Who may POST AdmissionReviews: the API server, proven by a TLS client certificate (the Kubernetes
// "authenticate apiservers" recipe). The handshake refuses a missing or unknown certificate; this decides
// on the name of one the CA did sign, so the cluster CA (which signs many clients) can be the trust root.
import type { TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import type { Counter } from 'prom-client';
import { peerCertificate, peerVerdict, type PeerCertificate } from '../../lib/server/client-certificate.ts';

/** The common name the local control plane, `kubeloop dev` and the chart's default expect the API server to present. */
export const API_SERVER_WEBHOOK_CLIENT_NAME = 'kube-apiserver-webhook-client';

export interface ClientAuthentication {
  /** PEM of the CA(s) the API server's webhook client certificate chains to. */
  caPem: string;
  /** Subject common names accepted; empty: any certificate the CA signed. */
  names: readonly string[];
}

/** What the TLS layer knows about the caller. */
export type PeerIdentity = PeerCertificate;

export type CallerDecision = { ok: true } | { ok: false; statusCode: 401 | 403; code: string; message: string };

/** Pure: may this peer send admission reviews? */
export function decideCaller(peer: PeerIdentity, names: readonly string[]): CallerDecision {
  const verdict = peerVerdict(peer, names);
  if (verdict === 'unauthenticated') {
    return { ok: false, statusCode: 401, code: 'Unauthenticated', message: 'admission reviews are accepted only from the API server, with its webhook client certificate' };
  }
  if (verdict === 'forbidden') {
    return {
      ok: false,
      statusCode: 403,
      code: 'Forbidden',
      message: `client certificate "${peer.commonName}" is not the API server's webhook client (accepted: ${names.join(', ')})`,
    };
  }
  return { ok: true };
}

export const peerIdentity = peerCertificate;

/** Node's TLS server options that make the handshake itself require a certificate from the CA. */
export function clientCertificateTlsOptions(auth: ClientAuthentication): { requestCert: true; rejectUnauthorized: true; ca: string } {
  return { requestCert: true, rejectUnauthorized: true, ca: auth.caPem };
}

/**
 * Refuses every request (probes included: they are on the ops port) from a caller that is not the API
 * server, before its body is read; counts refusals and failed handshakes by reason.
 */
export function requireApiServer(app: FastifyInstance, auth: ClientAuthentication, refusals: Counter<'reason'>): void {
  app.server.on('tlsClientError', () => refusals.inc({ reason: 'handshake' }));
  app.addHook('onRequest', async (request, reply) => {
    const decision = decideCaller(peerIdentity(request.raw.socket as TLSSocket), auth.names);
    if (decision.ok) return;
    refusals.inc({ reason: decision.code === 'Forbidden' ? 'name' : 'certificate' });
    request.log.warn({ statusCode: decision.statusCode, message: decision.message }, 'admission caller refused');
    return reply.code(decision.statusCode).send({ statusCode: decision.statusCode, code: decision.code, message: decision.message });
  });
}
