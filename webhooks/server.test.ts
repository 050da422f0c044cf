// The webhook over real HTTPS: every kind of request the API server (or a confused client) can send,
// TLS settings, and a serving-certificate swap while the server keeps answering.
import { readFileSync } from 'node:fs';
import { connect, type PeerCertificate } from 'node:tls';
import type { V1Pod } from '@kubernetes/client-node';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateBundle, generateServingCert, type CertificateBundle } from '../certs/generate.ts';
import { createLogger } from '../lib/observability/logger.ts';
import { listen } from '../lib/server/index.ts';
import type { AdmissionReview } from './admission-review.ts';
import { createWebhookServer, type WebhookServer } from './server.ts';
import type { Watcher } from '../api/watcher.ts';

const fixture = (name: string): AdmissionReview =>
  JSON.parse(readFileSync(new URL(`../test/fixtures/admission/${name}.json`, import.meta.url), 'utf8')) as AdmissionReview;

const watchers = new Map<string, Watcher>([
  [
    'shop/logwatch',
    {
      metadata: { name: 'logwatch', namespace: 'shop' },
      spec: { container: { name: 'logwatch', image: 'busybox:1.36' }, volume: { name: 'watch-data', emptyDir: {} } },
      status: { configMapName: 'logwatch-config' },
    },
  ],
  ['shop/odd', { metadata: { name: 'odd', namespace: 'shop' }, spec: { container: { name: 'odd', image: 'busybox', volumeMounts: { not: 'a list' } as never } } }],
  ['shop/imageless', { metadata: { name: 'imageless', namespace: 'shop' }, spec: { container: { name: 'imageless' } } }],
]);
const lookup = { get: (ns: string, name: string) => watchers.get(`${ns}/${name}`) };
const logger = createLogger({ name: 'webhook-test', level: 'silent' });

let bundle: CertificateBundle;
let server: WebhookServer;
let denying: WebhookServer;
let base: string;
let denyingBase: string;
let agent: Agent;

beforeAll(async () => {
  bundle = await generateBundle({ now: new Date(), identity: { service: 'kubeloop-webhook', namespace: 'kubeloop' } });
  server = createWebhookServer({ logger, watchers: lookup, missingWatcher: 'allow', serving: bundle.serving });
  denying = createWebhookServer({ logger, watchers: lookup, missingWatcher: 'deny', serving: bundle.serving });
  base = await listen(server.app, { port: 0, host: '127.0.0.1' });
  denyingBase = await listen(denying.app, { port: 0, host: '127.0.0.1' });
  agent = new Agent({ connect: { ca: bundle.ca.certPem } });
});
afterAll(async () => {
  await agent.close();
  await server.app.close();
  await denying.app.close();
});

async function post(body: unknown, options: { raw?: boolean; contentType?: string; url?: string } = {}) {
  const response = await request(`${options.url ?? base}/mutate/watcher-sidecar`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': options.contentType ?? 'application/json' },
    body: options.raw ? (body as string) : JSON.stringify(body),
  });
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> & AdmissionReview };
}

function decodePatch(review: AdmissionReview): Operation[] {
  return JSON.parse(Buffer.from(review.response?.patch ?? '', 'base64').toString()) as Operation[];
}

describe('POST /mutate/watcher-sidecar over HTTPS', () => {
  it('injects the sidecar into an annotated ReplicaSet pod that has no name yet', async () => {
    const review = fixture('pod-create-annotated');
    const { status, body } = await post(review);
    expect(status).toBe(200);
    expect(body.response).toMatchObject({ uid: review.request?.uid, allowed: true, patchType: 'JSONPatch' });
    const pod = jsonpatch.applyPatch(structuredClone(review.request?.object) as V1Pod, decodePatch(body), true, false).newDocument;
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(['web', 'logwatch']);
    expect(pod.spec?.containers[1]?.envFrom).toEqual([{ configMapRef: { name: 'logwatch-config', optional: true } }]);
    expect(pod.spec?.volumes?.map((v) => v.name)).toEqual([expect.stringMatching(/^kube-api-access-/), 'watch-data']);
    expect(pod.metadata?.annotations?.['watch.kubeloop.dev/injected']).toBe('logwatch');
  });

  it('allows a pod without the annotation unchanged', async () => {
    const review = fixture('pod-create-unannotated');
    const { body } = await post(review);
    expect(body.response).toEqual({ uid: review.request?.uid, allowed: true });
  });

  it('allows UPDATE, non-pod objects and pods without containers unchanged', async () => {
    for (const name of ['pod-update', 'configmap-create', 'pod-create-no-containers']) {
      const review = fixture(name);
      const { status, body } = await post(review);
      expect(status).toBe(200);
      expect(body.response).toEqual({ uid: review.request?.uid, allowed: true });
    }
  });

  it('admits a pod naming a missing Watcher with a warning, or denies it when configured to', async () => {
    const review = fixture('pod-create-annotated');
    if (review.request) review.request.namespace = 'elsewhere';
    const allowed = await post(review);
    expect(allowed.body.response?.allowed).toBe(true);
    expect(allowed.body.response?.patch).toBeUndefined();
    expect(allowed.body.response?.warnings).toEqual(['Watcher "logwatch" not found in namespace "elsewhere"; pod admitted without the sidecar']);
    const denied = await post(review, { url: denyingBase });
    expect(denied.body.response).toMatchObject({ allowed: false, status: { code: 403, message: 'Watcher "logwatch" not found in namespace "elsewhere"' } });
  });

  it('admits a pod naming a Watcher whose container has no image unchanged, with a warning', async () => {
    const review = fixture('pod-create-annotated');
    (review.request?.object as V1Pod).metadata!.annotations!['watch.kubeloop.dev/watcher'] = 'imageless';
    const { body } = await post(review);
    expect(body.response).toEqual({
      uid: review.request?.uid,
      allowed: true,
      warnings: ['Watcher "imageless" has no spec.container.image; pod admitted without the sidecar'],
    });
  });

  it('admits a pod unchanged with a warning when the Watcher has a shape injection cannot use', async () => {
    const review = fixture('pod-create-annotated');
    (review.request?.object as V1Pod).metadata!.annotations!['watch.kubeloop.dev/watcher'] = 'odd';
    const { status, body } = await post(review);
    expect(status).toBe(200);
    expect(body.response?.allowed).toBe(true);
    expect(body.response?.patch).toBeUndefined();
    expect(body.response?.warnings?.[0]).toMatch(/^Watcher "odd" could not be injected \(.+\); pod admitted without the sidecar$/);
  });

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
    expect(body.response?.patchType).toBe('JSONPatch');
  });

  it('serves /healthz, /readyz and /metrics with admission counters', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const response = await request(`${base}${path}`, { dispatcher: agent });
      expect(response.statusCode).toBe(200);
      await response.body.dump();
    }
    const metrics = await (await request(`${base}/metrics`, { dispatcher: agent })).body.text();
    expect(metrics).toMatch(/kubeloop_webhook_admissions_total\{outcome="injected"\} [1-9]/);
    expect(metrics).toMatch(/kubeloop_webhook_malformed_requests_total [1-9]/);
    expect(metrics).toContain('kubeloop_webhook_serving_certificate_expiry_timestamp_seconds');
    // controller-runtime's webhook metrics, by route: 200s for reviews, 400s for malformed ones; probes not counted.
    expect(metrics).toMatch(/controller_runtime_webhook_requests_total\{webhook="\/mutate\/watcher-sidecar",code="200"\} [1-9]/);
    expect(metrics).toMatch(/controller_runtime_webhook_requests_total\{webhook="\/mutate\/watcher-sidecar",code="400"\} [1-9]/);
    expect(metrics).toMatch(/controller_runtime_webhook_latency_seconds_count\{webhook="\/mutate\/watcher-sidecar"\} [1-9]/);
    expect(metrics).toContain('controller_runtime_webhook_requests_in_flight{webhook="/mutate/watcher-sidecar"} 0');
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
