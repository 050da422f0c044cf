// npm run bench:api-client: client CPU per API request, in one process and one run against a private local
// control plane: today's KubeClient against bare undici (HTTP/1.1 keep-alive, HTTP/2) and node:http2, for a
// GET and a JSON merge PATCH of one ConfigMap, plus the router's patch-building path without I/O.
import { execFileSync } from 'node:child_process';
import http2 from 'node:http2';
import type { AgentOptions } from 'node:https';
import fastJsonPatch from 'fast-json-patch';
import { Agent } from 'undici';
import { startControlPlane } from '../cli/cluster/index.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { withResourceVersionTest } from '../router/index.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300); // per variant, operation and round
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 16);
const PATCH_BUILDS = Number(process.env.BENCH_PATCH_BUILDS ?? 20_000);
const NAMESPACE = 'api-client-bench';
const PATH = `/api/v1/namespaces/${NAMESPACE}/configmaps/target`;
const MERGE = 'application/merge-patch+json';

type Op = 'GET' | 'PATCH';
/** One way of sending a request: resolves with the parsed JSON reply, rejects on a non-2xx status. */
type Send = (op: Op, body: string | undefined) => Promise<unknown>;

const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const cpuMicros = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Sends `count` requests of one kind, `IN_FLIGHT` at a time; the client CPU per request in microseconds. */
async function measure(send: Send, op: Op, count: number): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await send(op, op === 'PATCH' ? JSON.stringify({ metadata: { labels: { round: String(i) } } }) : undefined);
    }
  };
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return cpuMicros(before) / count;
}

function undiciSend(origin: string, tls: AgentOptions, headers: Record<string, string>, allowH2: boolean): { send: Send; close: () => Promise<void> } {
  const agent = new Agent({ connect: { ca: tls.ca, cert: tls.cert, key: tls.key }, keepAliveTimeout: 30_000, connections: null, allowH2 });
  const send: Send = async (op, body) => {
    const response = await agent.request({
      origin, path: PATH, method: op, body, headersTimeout: 30_000, bodyTimeout: 30_000,
      headers: body === undefined ? { ...headers, accept: 'application/json' } : { ...headers, accept: 'application/json', 'content-type': MERGE },
    });
    const text = await response.body.text();
    if (response.statusCode >= 300) throw new Error(`${op} ${response.statusCode}: ${text.slice(0, 200)}`);
    return JSON.parse(text);
  };
  return { send, close: () => agent.close() };
}

function nodeHttp2Send(origin: string, tls: AgentOptions, headers: Record<string, string>): { send: Send; close: () => Promise<void> } {
  const session = http2.connect(origin, { ca: tls.ca, cert: tls.cert, key: tls.key });
  session.on('error', (error) => process.stderr.write(`[node:http2] session error: ${error.message}\n`));
  const send: Send = (op, body) => new Promise((resolve, reject) => {
    const stream = session.request({
      ':method': op, ':path': PATH, ...headers, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': MERGE }),
    }, { endStream: body === undefined });
    stream.setTimeout(30_000, () => stream.close(http2.constants.NGHTTP2_CANCEL));
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on('response', (h) => void (status = Number(h[':status'])));
    stream.on('data', (chunk: Buffer) => void chunks.push(chunk));
    stream.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (status >= 300 || status === 0) reject(new Error(`${op} ${status}: ${text.slice(0, 200)}`));
      else resolve(JSON.parse(text));
    });
    stream.on('error', reject);
    if (body !== undefined) stream.end(body);
  });
  return { send, close: () => new Promise((resolve) => session.close(() => resolve())) };
}

/**
 * The router's write path without I/O, for one reconcile of a pod-sized object: the function's patch as the
 * SDK derives it (fast-json-patch compare of draft and original), the router's resourceVersion test, the body.
 */
function patchBuildingMicros(count: number): number {
  const original = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'web-0', namespace: 'default', uid: 'a3c1', resourceVersion: '1234', labels: { app: 'web', tier: 'front' }, annotations: { note: 'x'.repeat(200) } },
    spec: { nodeName: 'node-0', containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }], resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], podIP: '10.0.0.1' },
  };
  let bytes = 0;
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const draft = structuredClone(original);
    draft.metadata.labels = { ...draft.metadata.labels, 'pod-name': `web-${i}` } as typeof draft.metadata.labels;
    const patch = withResourceVersionTest(fastJsonPatch.compare(original, draft), original.metadata.resourceVersion);
    bytes += JSON.stringify(patch).length;
  }
  const micros = cpuMicros(before) / count;
  if (bytes === 0) throw new Error('no patch built');
  return micros;
}

const startedUptime = uptime();
const plane = await startControlPlane({ nodes: 1, onProgress: (line) => process.stderr.write(`[control-plane] ${line}\n`) });
try {
  const kubeConfig = plane.kubeConfig();
  const unlimited = { rateLimit: { qps: 0, burst: 0 } };
  const admin = await KubeClient.fromKubeConfig(kubeConfig, unlimited);
  await admin.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NAMESPACE } } });
  await admin.request({ method: 'POST', path: `/api/v1/namespaces/${NAMESPACE}/configmaps`, body: { metadata: { name: 'target' }, data: { a: 'b' } } });
  const tls: AgentOptions & { headers?: Record<string, string> } = {};
  await kubeConfig.applyToHTTPSOptions(tls);
  const auth = Object.fromEntries(Object.entries(tls.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
  const origin = new URL(plane.server).origin;

  const kubeClient = (http2Enabled: boolean) => KubeClient.fromKubeConfig(kubeConfig, { ...unlimited, http2: http2Enabled }).then((client) => ({
    send: ((op, body) => client.request(op === 'GET' ? { path: PATH } : { method: 'PATCH', path: PATH, body, contentType: MERGE })) as Send,
    close: () => client.close(),
  }));
  const variants: Record<string, { send: Send; close: () => Promise<void> }> = {
    'KubeClient (today: undici, HTTP/2 by ALPN)': await kubeClient(true),
    'KubeClient http2: false': await kubeClient(false),
    'undici HTTP/1.1 keep-alive': undiciSend(origin, tls, auth, false),
    'undici HTTP/2 (allowH2)': undiciSend(origin, tls, auth, true),
    'node:http2': nodeHttp2Send(origin, tls, auth),
  };
  const TODAY = Object.keys(variants)[0]!;
  const names = Object.keys(variants);
  const cpu = new Map<string, number[]>();
  const record = (key: string, value: number) => cpu.set(key, [...(cpu.get(key) ?? []), value]);

  // Warm-up: connections, TLS sessions, JIT.
  for (const name of names) for (const op of ['GET', 'PATCH'] as const) await measure(variants[name]!.send, op, Math.min(REQUESTS, 100));
  patchBuildingMicros(Math.min(PATCH_BUILDS, 2000));
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate who goes first each round so drift in the machine's load falls on every variant alike.
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const name of order) for (const op of ['GET', 'PATCH'] as const) record(`${name}|${op}`, await measure(variants[name]!.send, op, REQUESTS));
    record('patch-building|BUILD', patchBuildingMicros(PATCH_BUILDS));
    process.stderr.write(`[bench] round ${round + 1}/${ROUNDS} done; ${uptime()}\n`);
  }

  const rows: string[][] = [];
  for (const op of ['GET', 'PATCH'] as const) {
    const today = median(cpu.get(`${TODAY}|${op}`)!);
    for (const name of names) {
      const values = cpu.get(`${name}|${op}`)!;
      const m = median(values);
      rows.push([name, op === 'PATCH' ? 'merge PATCH' : 'GET', m.toFixed(0), `${(m / today).toFixed(2)}x`, values.map((v) => v.toFixed(0)).join(' ')]);
    }
  }
  const build = cpu.get('patch-building|BUILD')!;
  const todayPatch = median(cpu.get(`${TODAY}|PATCH`)!);
  rows.push(['patch building (SDK compare + RV test + stringify), no I/O', 'build', median(build).toFixed(1), `${(median(build) / todayPatch).toFixed(3)}x of PATCH`, build.map((v) => v.toFixed(1)).join(' ')]);

  console.log(`${REQUESTS} requests per variant, operation and round, ${IN_FLIGHT} in flight, ${ROUNDS} rounds (median shown); ${PATCH_BUILDS} patch builds per round`);
  console.log(`uptime at start: ${startedUptime}`);
  console.log(`uptime at end:   ${uptime()}`);
  console.log('| client | request | CPU us / request (median) | vs today | rounds |');
  console.log('|---|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  await Promise.all([admin.close(), ...Object.values(variants).map((v) => v.close())]);
} finally {
  await plane.stop();
}
