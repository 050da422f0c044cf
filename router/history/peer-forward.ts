// A history request that reached a replica without the key's history (a standby, or a sharded member that
// does not own the key) goes on to the replica that has it. Replicas recognise each other by the serving
// certificate they share (one Secret): each side presents it and checks the other presented exactly it,
// before a byte of the request (the caller's identity) is sent.
import { X509Certificate } from 'node:crypto';
import { request } from 'node:http';
import { connect, type TLSSocket } from 'node:tls';
import type { UserInfo } from '../../lib/kube/access-review.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import type { RequestHeaderConfig } from '../../lib/server/front-proxy.ts';

export interface PeerAddress {
  host: string;
  port: number;
}

/** Where the replica with this identity serves its history API. */
export type PeerResolver = (identity: string) => Promise<PeerAddress | undefined>;

/** Set on a forwarded request: the receiver answers from its own recorder and never forwards again. */
export const FORWARDED_BY_HEADER = 'x-kubeloop-forwarded-by';

const MAX_FORWARDED_BYTES = 8 * 1024 * 1024;

/** True when the TLS peer presented exactly this serving certificate: another replica of this router. */
export function presentedOwnCertificate(socket: TLSSocket, ownCertPem: string): boolean {
  const raw = socket.getPeerCertificate()?.raw;
  return raw !== undefined && raw.equals(new X509Certificate(ownCertPem).raw);
}

/** The caller as the front proxy named it, in the headers the receiving replica reads (the same requestheader settings). */
export function userHeaders(user: UserInfo, config: RequestHeaderConfig): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { [config.usernameHeaders[0] ?? 'X-Remote-User']: user.user };
  if (user.groups.length > 0) headers[config.groupHeaders[0] ?? 'X-Remote-Group'] = user.groups;
  for (const [key, values] of Object.entries(user.extra ?? {})) headers[`${config.extraHeaderPrefixes[0] ?? 'X-Remote-Extra-'}${encodeURIComponent(key)}`] = values;
  return headers;
}

function connectToReplica(peer: PeerAddress, tls: { certPem: string; keyPem: string }, timeoutMs: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    // Chain checks cannot apply (the shared certificate names the Service, not the pod): the exact certificate is the check.
    const socket = connect({ host: peer.host, port: peer.port, cert: tls.certPem, key: tls.keyPem, rejectUnauthorized: false, timeout: timeoutMs });
    socket.once('secureConnect', () => {
      if (presentedOwnCertificate(socket, tls.certPem)) return resolve(socket);
      socket.destroy();
      reject(new Error(`${peer.host}:${peer.port} is not a replica of this router (it presented another certificate)`));
    });
    socket.once('timeout', () => socket.destroy(new Error(`${peer.host}:${peer.port}: no TLS handshake within ${timeoutMs} ms`)));
    socket.once('error', reject);
  });
}

/** Sends the request on to the replica and returns its answer as it is (an ObjectHistory or a Status). */
export async function forwardToReplica(
  peer: PeerAddress,
  tls: { certPem: string; keyPem: string },
  forwarded: { path: string; headers: Record<string, string | string[]> },
  timeoutMs = 10_000,
): Promise<{ status: number; body: string }> {
  const socket = await connectToReplica(peer, tls, timeoutMs);
  return new Promise((resolve, reject) => {
    // HTTP over the TLS socket already checked (no agent: with one, Node would open a connection of its own).
    const req = request({ host: peer.host, port: peer.port, path: forwarded.path, method: 'GET', headers: forwarded.headers, createConnection: () => socket, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_FORWARDED_BYTES) return req.destroy(new Error(`the replica's answer exceeds ${MAX_FORWARDED_BYTES} bytes`));
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 502, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`the replica did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** In the cluster: a replica's identity is its pod's name (POD_NAME); its history API listens on the same port as ours. */
export function podPeerResolver(client: KubeClient, namespace: string, port: number): PeerResolver {
  return async (identity) => {
    const pod = await client.request<{ status?: { podIP?: string } }>({ path: `/api/v1/namespaces/${namespace}/pods/${encodeURIComponent(identity)}` });
    const ip = pod.status?.podIP;
    return ip ? { host: ip, port } : undefined;
  };
}
