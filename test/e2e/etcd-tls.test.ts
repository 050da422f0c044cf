// The local control plane's etcd speaks mutual TLS with its own CA on both ports: only the API server's
// client certificate gets in on the client port, only etcd's peer certificate on the peer port. Attacked
// with no certificate, with the cluster admin's and over plain HTTP.
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';

const clusterDir = inject('clusterDir');
const pki = (name: string) => readFileSync(join(clusterDir, 'pki', name), 'utf8');

/** etcd's client or peer URL, read from the command line of the etcd process serving this cluster's data dir. */
function etcdUrl(flag: '--listen-client-urls' | '--listen-peer-urls'): string {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!args.includes(`--data-dir=${join(clusterDir, 'etcd')}`)) continue;
    const url = args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
    if (url) return url;
  }
  throw new Error(`no etcd process serves ${clusterDir}/etcd`);
}

type Outcome = { status: number; body: string } | { error: string };

function health(url: string, tls: { cert?: string; key?: string } = {}, path = '/health'): Promise<Outcome> {
  return new Promise((resolve) => {
    const send = url.startsWith('https:') ? request : httpRequest;
    const req = send(`${url}${path}`, { ca: pki('etcd-ca.crt'), ...tls, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (error) => resolve({ error: error.message }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolve({ error: error.message }));
    req.end();
  });
}

describe('etcd of the local control plane', () => {
  const url = etcdUrl('--listen-client-urls');

  it('serves https on loopback', () => {
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    // The attacks below use a real certificate, not an empty one.
    expect(adminCert().cert).toContain('BEGIN CERTIFICATE');
  });

  it("answers the API server's etcd client certificate", async () => {
    const outcome = await health(url, { cert: pki('apiserver-etcd-client.crt'), key: pki('apiserver-etcd-client.key') });
    expect(outcome).toMatchObject({ status: 200, body: expect.stringContaining('"health":"true"') });
  });

  it.each([
    ['no client certificate', {}],
    ["the cluster admin's certificate (system:masters, signed by the cluster CA)", adminCert()],
  ])('refuses a client with %s', async (_case, tls) => {
    const outcome = await health(url, tls);
    expect('error' in outcome || outcome.status !== 200, JSON.stringify(outcome)).toBe(true);
    expect('body' in outcome ? outcome.body : '').not.toContain('"health"');
  });

  it('refuses plain HTTP', async () => {
    const outcome = await health(url.replace('https:', 'http:'));
    expect('body' in outcome ? outcome.body : '').not.toContain('"health"');
  });
});

// The peer port serves the member list and raft to any peer: with one member it is never joined, so
// only etcd's own peer certificate is let in.
describe('etcd peer port of the local control plane', () => {
  const url = etcdUrl('--listen-peer-urls');
  const members = (tls: { cert?: string; key?: string } = {}) => health(url, tls, '/members');

  it('serves https on loopback and lists the member to a certificate from etcd\'s CA', async () => {
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const outcome = await members({ cert: pki('etcd-peer.crt'), key: pki('etcd-peer.key') });
    expect(outcome).toMatchObject({ status: 200, body: expect.stringContaining('"name":"kubeloop"') });
  });

  it.each([
    ['no client certificate', {}],
    ["the cluster admin's certificate (system:masters, signed by the cluster CA)", adminCert()],
  ])('refuses a peer with %s', async (_case, tls) => {
    const outcome = await members(tls);
    expect('error' in outcome || outcome.status !== 200, JSON.stringify(outcome)).toBe(true);
    expect('body' in outcome ? outcome.body : '').not.toContain('kubeloop');
  });

  it('refuses plain HTTP', async () => {
    const outcome = await health(url.replace('https:', 'http:'), {}, '/members');
    expect('body' in outcome ? outcome.body : '').not.toContain('"name":"kubeloop"');
  });
});

/** The admin client certificate and key, from the cluster's kubeconfig. */
function adminCert(): { cert: string; key: string } {
  const kubeconfig = readFileSync(join(clusterDir, 'kubeconfig'), 'utf8');
  const field = (name: string) => Buffer.from(new RegExp(`${name}: (\\S+)`).exec(kubeconfig)?.[1] ?? '', 'base64').toString('utf8');
  return { cert: field('client-certificate-data'), key: field('client-key-data') };
}
