// The client certificate a TLS peer presented (whether it chains to the server's configured CA, and its
// common name) and the one rule on it that the webhook (the API server's webhook client) and the router's
// history API (the front proxy) both keep: a certificate from the CA, with one of the accepted names.
import type { TLSSocket } from 'node:tls';

export interface PeerCertificate {
  /** The certificate chained to the configured CA (always true past a handshake that requires one). */
  authorized: boolean;
  commonName: string | undefined;
}

/** The API server as caller: none or an unknown certificate is unauthenticated (401), another name forbidden (403). */
export type PeerVerdict = 'accepted' | 'unauthenticated' | 'forbidden';

/** Pure: whether the peer is the API server's client; `names` empty: any certificate the CA signed. */
export function peerVerdict(peer: PeerCertificate, names: readonly string[]): PeerVerdict {
  if (!peer.authorized || peer.commonName === undefined) return 'unauthenticated';
  return names.length > 0 && !names.includes(peer.commonName) ? 'forbidden' : 'accepted';
}

export function peerCertificate(socket: TLSSocket): PeerCertificate {
  const cn = socket.getPeerCertificate()?.subject?.CN;
  return { authorized: socket.authorized, commonName: Array.isArray(cn) ? cn[0] : cn };
}
