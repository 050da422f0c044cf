// npm run bench:webhook: (1) autocannon over HTTPS against POST /mutate/watcher-sidecar with a recorded
// AdmissionReview and, in the same run, against a no-op HTTPS fastify route (req/s, p50, p99, ratio);
// (2) the AdmissionHook path, gateway + function over HTTP, against the same decision made in-process;
// (3) pod-create latency through a real API server with webhooks registered vs without, same run
// (bench/webhook-apiserver.ts); (4) the same with 0, 1, 10 and 100 namespaced AdmissionHooks in other
// namespaces (bench/webhook-tenants.ts). docs/webhook.md "Latency" and docs/admission.md explain the figures.
// Servers run in child processes so the load generator and the server do not share an event loop.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateBundle } from '../certs/generate.ts';
import { autocannonPost, figures, spawnUntilUrl, urlLine } from './autocannon-kit.ts';
import { machineLoad, processTime, timeSince, verdict, type ProcessTime } from './process-figures.ts';
import { throughApiServer } from './webhook-apiserver.ts';
import { namespacedHooksThroughApiServer } from './webhook-tenants.ts';

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
/** Pod creates per hook count per round in part (4), and its rounds. */
const TENANT_PODS = Number(process.env.BENCH_TENANT_PODS ?? 150);
const TENANT_ROUNDS = Number(process.env.BENCH_TENANT_ROUNDS ?? 2);
/** BENCH_PARTS=direct,hop,apiserver,tenants (default all) runs only those parts. */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'direct,hop,apiserver,tenants').split(',').map((part) => part.trim()));

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

/**
 * The hop the gateway adds: HTTPS gateway -> HTTP function, against the same work done in-process. Latency
 * (the goal) with one connection, one review at a time, as the API server sends one per create; throughput
 * with CONNECTIONS. Per review: CPU time and run-queue wait of each server's event loop thread.
 */
async function gatewayHop(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-gateway-bench-'));
  const bundle = await generateBundle({ now: new Date(), identity: { service: 'kubeloop-webhook', namespace: 'kubeloop' } });
  await writeFile(join(dir, 'tls.crt'), bundle.serving.certPem);
  await writeFile(join(dir, 'tls.key'), bundle.serving.keyPem);
  const body = await readFile(UNLABELLED_FIXTURE, 'utf8');
  const fn = await spawnUntil([ADMISSION_SERVER, 'function'], urlLine);
  const gateway = await spawnUntil([ADMISSION_SERVER, 'gateway', join(dir, 'tls.crt'), join(dir, 'tls.key'), fn.url], urlLine);
  const direct = await spawnUntil([ADMISSION_SERVER, 'direct', join(dir, 'tls.crt'), join(dir, 'tls.key')], urlLine);
  const post = (url: string, seconds: number, connections: number) =>
    autocannonPost({ url: `${url}/admit/require-label`, body, connections, seconds, ca: bundle.ca.certPem });
  const pids = { gateway: gateway.child.pid!, function: fn.child.pid!, direct: direct.child.pid! };
  try {
    console.log(`\nAdmissionHook path, require-label on ${UNLABELLED_FIXTURE.slice(ROOT.length)}, ${ROUNDS} x ${DURATION_S} s per series and mode, alternating`);
    for (const connections of [1, CONNECTIONS]) {
      const runs = { gateway: { requests: 0, latencies: [] as number[] }, direct: { requests: 0, latencies: [] as number[] } };
      const spent = Object.fromEntries(Object.keys(pids).map((name) => [name, { cpuMs: 0, waitMs: 0 }])) as Record<keyof typeof pids, ProcessTime>;
      await post(gateway.url, 2, connections);
      await post(direct.url, 2, connections);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [name, server] of [['gateway', gateway], ['direct', direct]] as const) {
          const serving = name === 'gateway' ? (['gateway', 'function'] as const) : (['direct'] as const);
          const before = serving.map((process) => processTime(pids[process], true));
          const result = await post(server.url, DURATION_S, connections);
          serving.forEach((process, i) => {
            const time = timeSince(before[i]!, pids[process], true);
            spent[process].cpuMs += time.cpuMs;
            spent[process].waitMs += time.waitMs;
          });
          runs[name].requests += result.requests;
          for (const latency of result.latencies) runs[name].latencies.push(latency);
        }
      }
      const seconds = ROUNDS * DURATION_S;
      const g = figures(runs.gateway.latencies, runs.gateway.requests, seconds);
      const d = figures(runs.direct.latencies, runs.direct.requests, seconds);
      const per = (process: keyof typeof pids, requests: number) =>
        `${process} CPU ${ms(spent[process].cpuMs / requests)} wait ${ms(spent[process].waitMs / requests)}`;
      const goal = connections === 1 ? `: target <= 1 ms ${verdict(g.p99 - d.p99, 1)}` : ' (under load: queueing, not the goal)';
      console.log(`  ${connections} connection(s), ${machineLoad()}`);
      console.log(`    gateway (HTTPS) + function (HTTP)  ${g.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${ms(g.p50)}  p99 ${ms(g.p99)}`);
      console.log(`    same decision in-process (HTTPS)   ${d.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${ms(d.p50)}  p99 ${ms(d.p99)}`);
      console.log(`    added by the hop p50 ${ms(g.p50 - d.p50)}  p99 ${ms(g.p99 - d.p99)}${goal}, throughput ratio ${(g.requestsPerSecond / d.requestsPerSecond).toFixed(2)}`);
      console.log(`    per review: ${per('gateway', runs.gateway.requests)}; ${per('function', runs.gateway.requests)}; ${per('direct', runs.direct.requests)}`);
    }
  } finally {
    for (const server of [gateway, direct, fn]) server.child.kill();
  }
}

if (PARTS.has('direct')) await direct();
if (PARTS.has('hop')) await gatewayHop();
if (PARTS.has('apiserver') && !SKIP_CLUSTER) await throughApiServer({ root: ROOT, pods: PODS });
if (PARTS.has('tenants') && !SKIP_CLUSTER) await namespacedHooksThroughApiServer({ root: ROOT, pods: TENANT_PODS, rounds: TENANT_ROUNDS });
