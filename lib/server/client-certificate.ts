// The client certificate a TLS peer presented: whether it chains to the server's configured CA, and its
// common name. The webhook (the API server's webhook client) and the router's history API (the front proxy) decide on it.
import type { TLSSocket } from 'node:tls';

export interface PeerCertificate {
  /** The certificate chained to the configured CA (always true past a handshake that requires one). */
  authorized: boolean;
  commonName: string | undefined;
}

export function peerCertificate(socket: TLSSocket): PeerCertificate {
  const cn = socket.getPeerCertificate()?.subject?.CN;
  return { authorized: socket.authorized, commonName: Array.isArray(cn) ? cn[0] : cn };
}
