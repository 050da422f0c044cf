import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../test/support/test-certificate.ts';
import { forwardToReplica, presentedOwnCertificate, userHeaders } from './peer-forward.ts';

const shared = selfSignedCertificate('kubeloop-history');
const servers: Server[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

/** A history API stand-in that records what reached it and whether the caller presented `trusted`. */
async function replica(serving: { key: string; cert: string }, trusted: string) {
  const seen: Array<{ url: string | undefined; user: unknown; peer: boolean }> = [];
  const server = createServer({ ...serving, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    seen.push({ url: req.url, user: req.headers['x-remote-user'], peer: presentedOwnCertificate(req.socket as TLSSocket, trusted) });
    res.end('{"kind":"ObjectHistory"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { port: (server.address() as AddressInfo).port, seen };
}

describe('forwardToReplica', () => {
  it('passes the request to a replica presenting the shared certificate, which sees the same one', async () => {
    const peer = await replica(shared, shared.cert);
    const answer = await forwardToReplica({ host: '127.0.0.1', port: peer.port }, { certPem: shared.cert, keyPem: shared.key }, { path: '/h?loop=a', headers: { 'x-remote-user': 'alice' } });
    expect(answer).toEqual({ status: 200, body: '{"kind":"ObjectHistory"}' });
    expect(peer.seen).toEqual([{ url: '/h?loop=a', user: 'alice', peer: true }]);
  });

  it('sends nothing (the caller identity included) to a server presenting another certificate', async () => {
    const impostor = await replica(selfSignedCertificate('kubeloop-history'), shared.cert);
    const forwarding = forwardToReplica({ host: '127.0.0.1', port: impostor.port }, { certPem: shared.cert, keyPem: shared.key }, { path: '/h', headers: { 'x-remote-user': 'alice' } });
    await expect(forwarding).rejects.toThrow('is not a replica of this router');
    expect(impostor.seen).toEqual([]);
  });
});

describe('userHeaders', () => {
  it('names the user, each group and the extra in the requestheader names', () => {
    const config = { caPem: '', allowedNames: [], usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] };
    expect(userHeaders({ user: 'alice', groups: ['a', 'b'], extra: { 'scopes/x': ['1'] } }, config)).toEqual({ 'X-Remote-User': 'alice', 'X-Remote-Group': ['a', 'b'], 'X-Remote-Extra-scopes%2Fx': ['1'] });
  });
});
