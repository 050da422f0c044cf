// The webhook gateway over real HTTPS: malformed requests the API server (or a confused client) can send,
// TLS settings, a serving-certificate swap while the server keeps answering, the ops port, and the API
// server's client certificate required: callers without it, or with another name or CA, are refused.
import { readFileSync } from 'node:fs';
import { connect, type PeerCertificate } from 'node:tls';
import type { V1Pod } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateBundle, generateServingCert, type CertificateBundle } from '../certs/generate.ts';
import { createLogger } from '../lib/observability/logger.ts';
import { createCaCertificate, issueLeafCertificate, newRsaKey, type CertKeyPem } from '../lib/pki/x509.ts';
import { listen } from '../lib/server/index.ts';
import type { AdmissionReview } from './gateway/admission-review.ts';
import { createWebhookServer, type WebhookServer } from './server.ts';
import { FunctionCaller } from './gateway/function-caller.ts';
import { NO_CONTEXT } from './gateway/context-cache.ts';

const fixture = (name: string): AdmissionReview =>
  JSON.parse(readFileSync(new URL(`../test/fixtures/admission/${name}.json`, import.meta.url), 'utf8')) as AdmissionReview;

const logger = createLogger({ name: 'webhook-test', level: 'silent' });

let bundle: CertificateBundle;
let server: WebhookServer;
let base: string;
let opsBase: string;
let agent: Agent;

beforeAll(async () => {
  bundle = await generateBundle({ now: new Date(), identity: { service: 'kubeloop-webhook', namespace: 'kubeloop' } });
  server = createWebhookServer({ logger, serving: bundle.serving, gateway: { hooks: () => new Map(), contexts: NO_CONTEXT, caller: new FunctionCaller(), reportCall: () => {} } });
  base = await listen(server.app, { port: 0, host: '127.0.0.1' });
  opsBase = await listen(server.ops.app, { port: 0, host: '127.0.0.1' });
  agent = new Agent({ connect: { ca: bundle.ca.certPem } });
});
afterAll(async () => {
  await agent.close();
  await server.app.close();
  await server.ops.app.close();
});

async function post(body: unknown, options: { raw?: boolean; contentType?: string; url?: string } = {}) {
  const response = await request(`${options.url ?? base}/admit/gone`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': options.contentType ?? 'application/json' },
    body: options.raw ? (body as string) : JSON.stringify(body),
  });
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> & AdmissionReview };
}

describe('POST /admit/<hook> over HTTPS', () => {
  it('answers 400 with a message for a body that is not JSON', async () => {
    const { status, body } = await post('{"kind": "AdmissionRev', { raw: true });
    expect(status).toBe(400);
    expect(body.message).toMatch(/JSON/i);
  });

  it('answers 400 for JSON that is not an AdmissionReview, or has no request', async () => {
    const notReview = await post({ hello: 'world' });
    expect(notReview.status).toBe(400);
    expect(notReview.body.message).toBe('expected kind "AdmissionReview", got null');
    const noRequest = await post({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect(noRequest.status).toBe(400);
    expect(noRequest.body.message).toBe('AdmissionReview has no "request" object');
    const array = await post([1, 2]);
    expect(array.status).toBe(400);
  });

  it('answers 400 naming the supported version for an admission.k8s.io/v1beta1 review', async () => {
    const { status, body } = await post(fixture('pod-create-v1beta1'));
    expect(status).toBe(400);
    expect(body.message).toContain('admission.k8s.io/v1beta1');
    expect(body.message).toContain('admissionReviewVersions: ["v1"]');
  });

  it('accepts admission reviews larger than fastify’s 1 MiB default', async () => {
    const review = fixture('pod-create-annotated');
    const pod = review.request?.object as V1Pod;
    pod.metadata!.annotations!['big'] = 'x'.repeat(3 * 1024 * 1024);
    const { status, body } = await post(review);
    expect(status).toBe(200);
    // A hook that is not (or no longer) served never blocks the request.
    expect(body.response).toMatchObject({ uid: review.request?.uid, allowed: true, warnings: [expect.stringContaining('admission hook "gone" is not served')] });
  });

  it('serves /healthz, /readyz and /metrics on the plain HTTP ops port, with the serving certificate\'s expiry, and no /metrics on the admission port', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const response = await request(`${opsBase}${path}`);
      expect(response.statusCode).toBe(200);
      await response.body.dump();
    }
    const onAdmissionPort = await request(`${base}/metrics`, { dispatcher: agent });
    expect(onAdmissionPort.statusCode).toBe(404);
    await onAdmissionPort.body.dump();
    const metrics = await (await request(`${opsBase}/metrics`)).body.text();
    expect(metrics).toContain('kubeloop_webhook_tls_connections_total');
    expect(metrics).toContain('kubeloop_webhook_serving_certificate_expiry_timestamp_seconds');
    // controller-runtime's webhook metrics, by route: 200s for reviews, 400s for malformed ones; probes not counted.
    expect(metrics).toMatch(/controller_runtime_webhook_requests_total\{webhook="\/admit\/:hook",code="200"\} [1-9]/);
    expect(metrics).toMatch(/controller_runtime_webhook_requests_total\{webhook="\/admit\/:hook",code="400"\} [1-9]/);
    expect(metrics).toMatch(/controller_runtime_webhook_latency_seconds_count\{webhook="\/admit\/:hook"\} [1-9]/);
    expect(metrics).toContain('controller_runtime_webhook_requests_in_flight{webhook="/admit/:hook"} 0');
    expect(metrics).not.toMatch(/controller_runtime_webhook_requests_total\{webhook="\/(healthz|readyz|metrics)"/);
  });
});

function peerCertificate(url: string, options: { minVersion?: 'TLSv1' | 'TLSv1.2'; maxVersion?: 'TLSv1.1' | 'TLSv1.2'; ciphers?: string } = {}): Promise<PeerCertificate> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port), ca: bundle.ca.certPem, servername: 'localhost', ...options }, () => {
      resolve(socket.getPeerCertificate());
      socket.end();
    });
    socket.on('error', reject);
  });
}

describe('TLS', () => {
  it('refuses TLS 1.1 and accepts TLS 1.2', async () => {
    // The client offers TLS 1.0/1.1 only (with OpenSSL's security level lowered so the client itself allows it):
    // the server answers with a protocol_version alert.
    await expect(peerCertificate(base, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' })).rejects.toThrow(/protocol version/i);
    await expect(peerCertificate(base, { maxVersion: 'TLSv1.2' })).resolves.toBeDefined();
  });

  it('negotiates HTTP/1.1 over ALPN when a client offers h2 first, as kube-apiserver does for loopback URLs', async () => {
    const { port } = new URL(base);
    const protocol = await new Promise<string | false | null>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: Number(port), ca: bundle.ca.certPem, servername: 'localhost', ALPNProtocols: ['h2', 'http/1.1'] }, () => {
        resolve(socket.alpnProtocol);
        socket.end();
      });
      socket.on('error', reject);
    });
    expect(protocol).toBe('http/1.1');
  });

  it('keeps idle connections longer than the 90 s the API server keeps them, so the API server closes first', () => {
    const https = server.app.server as unknown as { keepAliveTimeout: number; timeout: number };
    expect(https.keepAliveTimeout).toBeGreaterThan(90_000);
    expect(https.timeout).toBeGreaterThan(https.keepAliveTimeout);
  });

  it('swaps the serving certificate in place: new handshakes get the new one, a kept-alive connection keeps working', async () => {
    const before = await peerCertificate(base);
    // A kept-alive connection opened on the old certificate.
    expect((await post(fixture('pod-create-unannotated'))).status).toBe(200);
    const renewed = await generateServingCert({ now: new Date(), ca: bundle.ca, identity: { service: 'kubeloop-webhook', namespace: 'kubeloop' } });
    server.setServingCertificate(renewed);
    const after = await peerCertificate(base);
    expect(after.serialNumber).not.toBe(before.serialNumber);
    expect((await post(fixture('pod-create-annotated'))).status).toBe(200);
    const fresh = new Agent({ connect: { ca: bundle.ca.certPem } });
    const response = await request(`${base}/healthz`, { dispatcher: fresh });
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    await fresh.close();
  });
});

describe('the API server\'s client certificate required (--client-ca-file, --client-name)', () => {
  let clientCa: CertKeyPem;
  let strangerCa: CertKeyPem;
  let guarded: WebhookServer;
  let guardedBase: string;
  const agents: Agent[] = [];
  const now = new Date();
  const clientCert = async (ca: CertKeyPem, commonName: string): Promise<CertKeyPem> =>
    issueLeafCertificate({ key: await newRsaKey(), issuer: ca, subject: { commonName }, now, days: 1, usage: 'client' });
  const agentWith = (client?: CertKeyPem): Agent => {
    const made = new Agent({ connect: { ca: bundle.ca.certPem, ...(client ? { cert: client.certPem, key: client.keyPem } : {}) } });
    agents.push(made);
    return made;
  };
  const review = (dispatcher: Agent) =>
    request(`${guardedBase}/admit/gone`, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body: JSON.stringify(fixture('pod-create-annotated')) });

  beforeAll(async () => {
    [clientCa, strangerCa] = await Promise.all([newRsaKey(), newRsaKey()]).then(([a, b]) => [
      createCaCertificate({ key: a, subject: { commonName: 'cluster-ca' }, now, days: 1 }),
      createCaCertificate({ key: b, subject: { commonName: 'stranger-ca' }, now, days: 1 }),
    ]);
    guarded = createWebhookServer({
      logger,
      serving: bundle.serving,
      clientAuth: { caPem: clientCa.certPem, names: ['kube-apiserver-webhook-client'] },
      gateway: { hooks: () => new Map(), contexts: NO_CONTEXT, caller: new FunctionCaller(), reportCall: () => {} },
    });
    guardedBase = await listen(guarded.app, { port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    for (const a of agents) await a.close();
    await guarded?.app.close();
  });

  it('answers the API server\'s certificate with a review', async () => {
    const reply = await review(agentWith(await clientCert(clientCa, 'kube-apiserver-webhook-client')));
    expect(reply.statusCode).toBe(200);
    expect(((await reply.body.json()) as AdmissionReview).response?.allowed).toBe(true);
  });

  it('refuses a caller with no certificate, or one from another CA, in the TLS handshake', async () => {
    await expect(review(agentWith())).rejects.toThrow(/certificate|socket|closed|reset|alert/i);
    await expect(review(agentWith(await clientCert(strangerCa, 'kube-apiserver-webhook-client')))).rejects.toThrow(/certificate|socket|closed|reset|alert/i);
  });

  it('answers 403 naming the accepted names to another client the same CA signed (an admin, a kubelet)', async () => {
    const reply = await review(agentWith(await clientCert(clientCa, 'admin')));
    expect(reply.statusCode).toBe(403);
    expect(await reply.body.json()).toMatchObject({ code: 'Forbidden', message: 'client certificate "admin" is not the API server\'s webhook client (accepted: kube-apiserver-webhook-client)' });
  });

  it('keeps requiring it after a serving-certificate swap', async () => {
    guarded.setServingCertificate(await generateServingCert({ now, ca: bundle.ca, identity: { service: 'kubeloop-webhook', namespace: 'kubeloop' } }));
    await expect(review(agentWith())).rejects.toThrow(/certificate|socket|closed|reset|alert/i);
    expect((await review(agentWith(await clientCert(clientCa, 'kube-apiserver-webhook-client')))).statusCode).toBe(200);
  });
});
