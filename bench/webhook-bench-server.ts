// Child process of bench/webhook.bench.ts: serves over HTTPS either the Watcher sidecar decision in-process
// (the watcher-sidecar function behind the gateway's conversions, a static Watcher as context: "webhook"), a
// no-op fastify route parsing the same body ("noop"), or the floor of any webhook ("floor": bare node:https
// allowing everything), with the certificate files (and a log file) in argv; prints {"url": ...} on stdout
// and runs until killed.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { fastify } from 'fastify';
import { pino } from 'pino';
import { createLogger } from '../lib/observability/logger.ts';
import { listen } from '../lib/server/index.ts';
import { createWebhookServer, DEV_HOOK_POLICY, resolveHook } from '../webhooks/index.ts';
import watcherSidecar from '../functions/watcher-sidecar/index.ts';
import type { KubeObject } from '../api/meta.ts';
import { directAdmissionRoute } from './direct-admission-route.ts';

const [mode, certFile, keyFile, logFile] = process.argv.slice(2);
// An orderly exit on SIGTERM, so a CPU profile (BENCH_CPU_PROF) is written.
process.once('SIGTERM', () => process.exit(0));
if (!certFile || !keyFile) {
  console.error('usage: webhook-bench-server.ts webhook|noop|floor <tls.crt> <tls.key> [log file]');
  process.exit(2);
}
const serving = { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };

if (mode === 'noop') {
  const app = fastify({ bodyLimit: 8 * 1024 * 1024, https: { key: serving.keyPem, cert: serving.certPem, minVersion: 'TLSv1.2' } });
  app.post('/mutate/watcher-sidecar', async () => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'x', allowed: true } }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(JSON.stringify({ url }));
} else if (mode === 'floor') {
  // What any out-of-process webhook costs the API server on this machine: TLS, HTTP/1.1, one JSON parse,
  // no framework, no patch. Keep-alive outlasts the API server's 90 s idle timeout, as the webhook's does.
  const server = createServer({ key: serving.keyPem, cert: serving.certPem, minVersion: 'TLSv1.2', keepAliveTimeout: 100_000 }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { request: review } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string } };
      const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.uid, allowed: true } });
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number };
    console.log(JSON.stringify({ url: `https://127.0.0.1:${address.port}` }));
  });
} else if (mode === 'webhook') {
  const watcher: KubeObject = {
    apiVersion: 'watch.kubeloop.dev/v1alpha1',
    kind: 'Watcher',
    metadata: { name: 'logwatch', namespace: 'shop' },
    spec: {
      container: { name: 'logwatch', image: 'busybox:1.36', volumeMounts: [{ name: 'watch-data', mountPath: '/data' }] },
      volume: { name: 'watch-data', emptyDir: {} },
      imagePullSecrets: { name: 'registry-creds' },
    },
    status: { configMapName: 'logwatch-config' },
  };
  // Production settings: info-level JSON logs, one line per injection, written synchronously to a file
  // (as a container runtime drains stdout to one). A pipe to the busy load generator would fill up and
  // block the writes, measuring the parent instead of the webhook.
  const resolved = resolveHook({
    metadata: { name: 'watcher-sidecar' },
    spec: { type: 'mutating', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], function: { url: 'http://127.0.0.1:1/admit' }, serviceAccount: { namespace: 'bench', name: 'watcher-sidecar' } },
  }, DEV_HOOK_POLICY);
  if (!resolved.ok) throw new Error(resolved.message);
  const logger = createLogger({ name: 'webhook', level: 'info', destination: pino.destination({ dest: logFile ?? '/dev/null', sync: true }) });
  const server = createWebhookServer({ logger, serving });
  directAdmissionRoute(server.app, '/mutate/watcher-sidecar', resolved.hook, watcherSidecar.admit, (namespace) => ({ watcher: namespace === 'shop' ? watcher : null }));
  const url = await listen(server.app, { port: 0, host: '127.0.0.1' });
  console.log(JSON.stringify({ url }));
} else {
  console.error('usage: webhook-bench-server.ts webhook|noop|floor <tls.crt> <tls.key>');
  process.exit(2);
}
