// npm run bench:webhook: (1) autocannon over HTTPS against POST /mutate/watcher-sidecar with a recorded
// AdmissionReview and, in the same run, against a no-op HTTPS fastify route (req/s, p50, p99, ratio);
// (2) the AdmissionHook path, gateway + function over HTTP, against the same decision made in-process;
// (3) pod-create latency through a real API server with the webhook registered vs without, same run.
// Servers run in child processes so the load generator and the server do not share an event loop.
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { generateBundle } from '../certs/generate.ts';
import { startControlPlane } from '../cli/cluster/index.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { autocannonPost, figures, spawnUntilUrl, urlLine } from './autocannon-kit.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER = join(ROOT, 'bench/webhook-bench-server.ts');
const ADMISSION_SERVER = join(ROOT, 'bench/admission-bench-server.ts');
const UNLABELLED_FIXTURE = join(ROOT, 'test/fixtures/admission/pod-create-unannotated.json');
const FIXTURE = join(ROOT, 'test/fixtures/admission/pod-create-annotated.json');
const CONNECTIONS = 10;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const PODS = Number(process.env.BENCH_PODS ?? 150);
const SKIP_CLUSTER = process.env.BENCH_SKIP_CLUSTER === '1';

const spawnUntil = (args: string[], match: (line: string) => string | undefined) => spawnUntilUrl(args, { match, cwd: ROOT });

const load = (url: string, body: string, seconds: number, ca: string) =>
  autocannonPost({ url: `${url}/mutate/watcher-sidecar`, body, connections: CONNECTIONS, seconds, ca });

const ms = (value: number): string => `${value.toFixed(2)} ms`;

async function direct(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-webhook-bench-'));
  const bundle = await generateBundle({ now: new Date(), identity: { service: 'kubeloop-webhook', namespace: 'kubeloop' } });
  await writeFile(join(dir, 'tls.crt'), bundle.serving.certPem);
  await writeFile(join(dir, 'tls.key'), bundle.serving.keyPem);
  const body = await readFile(FIXTURE, 'utf8');
  const webhook = await spawnUntil([SERVER, 'webhook', join(dir, 'tls.crt'), join(dir, 'tls.key'), join(dir, 'webhook.log')], urlLine);
  const noop = await spawnUntil([SERVER, 'noop', join(dir, 'tls.crt'), join(dir, 'tls.key')], urlLine);
  try {
    const runs = { webhook: { requests: 0, latencies: [] as number[] }, noop: { requests: 0, latencies: [] as number[] } };
    await load(webhook.url, body, 2, bundle.ca.certPem);
    await load(noop.url, body, 2, bundle.ca.certPem);
    // Alternate rounds so drift on a shared machine hits both alike.
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, server] of [['webhook', webhook], ['noop', noop]] as const) {
        const result = await load(server.url, body, DURATION_S, bundle.ca.certPem);
        runs[name].requests += result.requests;
        for (const latency of result.latencies) runs[name].latencies.push(latency);
      }
    }
    const seconds = ROUNDS * DURATION_S;
    const w = figures(runs.webhook.latencies, runs.webhook.requests, seconds);
    const n = figures(runs.noop.latencies, runs.noop.requests, seconds);
    console.log(`\nDirect HTTPS, ${CONNECTIONS} connections, ${ROUNDS} x ${DURATION_S} s each, body ${body.length} bytes (${FIXTURE.slice(ROOT.length)})`);
    console.log(`  /mutate/watcher-sidecar  ${w.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${ms(w.p50)}  p99 ${ms(w.p99)}`);
    console.log(`  no-op fastify (HTTPS)    ${n.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${ms(n.p50)}  p99 ${ms(n.p99)}`);
    const ratio = w.requestsPerSecond / n.requestsPerSecond;
    console.log(`  ratio webhook/no-op ${ratio.toFixed(2)} (target >= 0.7), p99 ${ms(w.p99)} (target <= 5 ms)`);
  } finally {
    webhook.child.kill();
    noop.child.kill();
  }
}

/** The hop the gateway adds: HTTPS gateway -> HTTP function, against the same work done in-process. */
async function gatewayHop(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-gateway-bench-'));
  const bundle = await generateBundle({ now: new Date(), identity: { service: 'kubeloop-webhook', namespace: 'kubeloop' } });
  await writeFile(join(dir, 'tls.crt'), bundle.serving.certPem);
  await writeFile(join(dir, 'tls.key'), bundle.serving.keyPem);
  const body = await readFile(UNLABELLED_FIXTURE, 'utf8');
  const fn = await spawnUntil([ADMISSION_SERVER, 'function'], urlLine);
  const gateway = await spawnUntil([ADMISSION_SERVER, 'gateway', join(dir, 'tls.crt'), join(dir, 'tls.key'), fn.url], urlLine);
  const direct = await spawnUntil([ADMISSION_SERVER, 'direct', join(dir, 'tls.crt'), join(dir, 'tls.key')], urlLine);
  const post = (url: string, seconds: number) => autocannonPost({ url: `${url}/admit/require-label`, body, connections: CONNECTIONS, seconds, ca: bundle.ca.certPem });
  try {
    const runs = { gateway: { requests: 0, latencies: [] as number[] }, direct: { requests: 0, latencies: [] as number[] } };
    await post(gateway.url, 2);
    await post(direct.url, 2);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, server] of [['gateway', gateway], ['direct', direct]] as const) {
        const result = await post(server.url, DURATION_S);
        runs[name].requests += result.requests;
        for (const latency of result.latencies) runs[name].latencies.push(latency);
      }
    }
    const seconds = ROUNDS * DURATION_S;
    const g = figures(runs.gateway.latencies, runs.gateway.requests, seconds);
    const d = figures(runs.direct.latencies, runs.direct.requests, seconds);
    console.log(`\nAdmissionHook path, ${CONNECTIONS} connections, ${ROUNDS} x ${DURATION_S} s each, require-label on ${UNLABELLED_FIXTURE.slice(ROOT.length)}`);
    console.log(`  gateway (HTTPS) + function (HTTP)  ${g.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${ms(g.p50)}  p99 ${ms(g.p99)}`);
    console.log(`  same decision in-process (HTTPS)   ${d.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${ms(d.p50)}  p99 ${ms(d.p99)}`);
    console.log(`  added by the hop p50 ${ms(g.p50 - d.p50)}  p99 ${ms(g.p99 - d.p99)} (target <= 1 ms), ratio ${(g.requestsPerSecond / d.requestsPerSecond).toFixed(2)}`);
  } finally {
    for (const server of [gateway, direct, fn]) server.child.kill();
  }
}

async function throughApiServer(): Promise<void> {
  const plane = await startControlPlane({ onProgress: (line) => process.stderr.write(`[control-plane] ${line}\n`) });
  const run = promisify(execFile);
  const kubectl = (...args: string[]) => run(plane.binaries.kubectl, ['--kubeconfig', plane.kubeconfigPath, ...args], { maxBuffer: 256 * 1024 * 1024 });
  const client = await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: { qps: 1000, burst: 1000 } });
  let webhook: ChildProcess | undefined;
  try {
    await kubectl('apply', '--server-side', '-f', join(ROOT, 'charts/kubeloop/crds/watchers.watch.kubeloop.dev.yaml'));
    await kubectl('wait', '--for=condition=Established', '--timeout=60s', 'crd/watchers.watch.kubeloop.dev');
    for (const ns of ['bench-hooked', 'bench-plain']) await kubectl('create', 'namespace', ns);
    for (const ns of ['bench-hooked', 'bench-plain']) {
      await kubectl('wait', '--for=jsonpath={.metadata.name}=default', '--timeout=60s', '-n', ns, 'serviceaccount/default');
    }
    await client.request({
      method: 'POST',
      path: '/apis/watch.kubeloop.dev/v1alpha1/namespaces/bench-hooked/watchers',
      body: { apiVersion: 'watch.kubeloop.dev/v1alpha1', kind: 'Watcher', metadata: { name: 'logwatch' }, spec: { container: { name: 'logwatch', image: 'busybox:1.36' }, volume: { name: 'watch-data', emptyDir: {} } } },
    });
    const started = await spawnUntil(
      ['cli/main.ts', 'webhook', '--dev', '--port=0', '--host=127.0.0.1', `--kubeconfig=${plane.kubeconfigPath}`, '--namespace=bench-kubeloop', '--only-namespace=bench-hooked'],
      (line) => (line.includes('"webhook serving"') ? (JSON.parse(line) as { url: string }).url : undefined),
    );
    webhook = started.child;
    const pod = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, annotations: { 'watch.kubeloop.dev/watcher': 'logwatch' } },
      spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] },
    });
    const create = async (ns: string, name: string): Promise<number> => {
      const start = performance.now();
      await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/pods`, body: pod(name) });
      return performance.now() - start;
    };
    for (let i = 0; i < 20; i++) {
      await create('bench-hooked', `warm-${i}`);
      await create('bench-plain', `warm-${i}`);
    }
    const hooked: number[] = [];
    const plain: number[] = [];
    // Interleaved, one at a time: both series see the same API server, etcd and machine load.
    for (let i = 0; i < PODS; i++) {
      hooked.push(await create('bench-hooked', `p-${i}`));
      plain.push(await create('bench-plain', `p-${i}`));
    }
    const injected = await client.request<{ items: Array<{ spec: { containers: unknown[] } }> }>({ path: '/api/v1/namespaces/bench-hooked/pods' });
    const withSidecar = injected.items.filter((p) => p.spec.containers.length === 2).length;
    const h = figures(hooked, hooked.length, 1);
    const p = figures(plain, plain.length, 1);
    console.log(`\nThrough the API server (kube-apiserver ${plane.server}), ${PODS} sequential pod creates per series, interleaved`);
    console.log(`  webhook registered   p50 ${ms(h.p50)}  p99 ${ms(h.p99)}  (${withSidecar}/${injected.items.length} pods injected)`);
    console.log(`  no webhook           p50 ${ms(p.p50)}  p99 ${ms(p.p99)}`);
    console.log(`  added by the webhook p50 ${ms(h.p50 - p.p50)}  p99 ${ms(h.p99 - p.p99)} (target <= 10 ms)`);
    // The API server's own view of the webhook call, and how many TLS connections it opened to us.
    const apiMetrics = (await kubectl('get', '--raw', '/metrics')).stdout;
    const sum = /apiserver_admission_webhook_admission_duration_seconds_sum\{[^}]*name="watcher-sidecar[^}]*\} ([0-9.e+-]+)/.exec(apiMetrics)?.[1];
    const count = /apiserver_admission_webhook_admission_duration_seconds_count\{[^}]*name="watcher-sidecar[^}]*\} ([0-9.e+-]+)/.exec(apiMetrics)?.[1];
    if (sum && count) console.log(`  API server's mean webhook call ${ms((Number(sum) / Number(count)) * 1000)} over ${count} calls`);
    // Only reading our own metrics on loopback: certificate verification is beside the point here.
    const insecure = new Agent({ connect: { rejectUnauthorized: false } });
    const webhookMetrics = await (await request(`${started.url}/metrics`, { dispatcher: insecure })).body.text();
    await insecure.close();
    const tls = /kubeloop_webhook_tls_connections_total ([0-9]+)/.exec(webhookMetrics)?.[1];
    console.log(`  TLS connections the API server opened to the webhook: ${tls ?? '?'}`);
    const handlerSum = /kubeloop_webhook_admission_duration_seconds_sum\{outcome="injected"\} ([0-9.e+-]+)/.exec(webhookMetrics)?.[1];
    const handlerCount = /kubeloop_webhook_admission_duration_seconds_count\{outcome="injected"\} ([0-9.e+-]+)/.exec(webhookMetrics)?.[1];
    if (handlerSum && handlerCount) {
      console.log(`  the webhook's own handling (parse, lookup, patch) mean ${ms((Number(handlerSum) / Number(handlerCount)) * 1000)}; the rest is transport and scheduling`);
    }
  } finally {
    webhook?.kill();
    await client.close();
    await plane.stop();
  }
}

await direct();
await gatewayHop();
if (!SKIP_CLUSTER) await throughApiServer();
