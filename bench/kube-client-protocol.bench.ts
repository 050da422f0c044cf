// npx tsx bench/kube-client-protocol.bench.ts: CPU per API request of KubeClient over HTTP/1.1 keep-alive
// against HTTP/2, on a private local control plane, in one process and one run (alternating rounds): the
// router's own kind of traffic (JSON patch of an object's labels, GET of it) at 16 in flight.
import { subscribe } from 'node:diagnostics_channel';
import { startControlPlane } from '../cli/cluster/index.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { alternatingRounds, mean } from './alternating-rounds.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const IN_FLIGHT = 16;
const NAMESPACE = 'protocol-bench';

// New connections per run (TLS handshakes are a large part of a request's CPU when connections churn).
let connected = 0;
subscribe('undici:client:connected', () => void connected++);

const plane = await startControlPlane({ nodes: 1, onProgress: (line) => process.stderr.write(`[control-plane] ${line}\n`) });
try {
  const admin = await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: { qps: 0, burst: 0 } });
  await admin.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NAMESPACE } } });
  await admin.request({ method: 'POST', path: `/api/v1/namespaces/${NAMESPACE}/configmaps`, body: { metadata: { name: 'target' }, data: { a: 'b' } } });
  const path = `/api/v1/namespaces/${NAMESPACE}/configmaps/target`;
  const unlimited = { qps: 0, burst: 0 };
  const clients = {
    'HTTP/1.1': await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: unlimited, http2: false }),
    'HTTP/2': await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: unlimited, http2: true }),
  };
  const run = async (client: KubeClient) => {
    let next = 0;
    const worker = async () => {
      while (next < REQUESTS) {
        const i = next++;
        if (i % 2 === 0) await client.request({ path });
        else {
          const patch = [{ op: 'add', path: '/metadata/labels', value: { round: String(i) } }];
          await client.request({ method: 'PATCH', path, body: patch, contentType: 'application/json-patch+json' });
        }
      }
    };
    const before = process.cpuUsage();
    connected = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    const used = process.cpuUsage(before);
    process.stderr.write(`[bench] ${client === clients['HTTP/2'] ? 'HTTP/2' : 'HTTP/1.1'}: ${((used.user + used.system) / REQUESTS).toFixed(0)} us/request, ${connected} new connections\n`);
    return (used.user + used.system) / REQUESTS;
  };
  const cpu = await alternatingRounds(clients, ROUNDS, run);
  console.log(`${REQUESTS} requests per round (GET and JSON patch of one ConfigMap, alternating), ${IN_FLIGHT} in flight, ${ROUNDS} rounds`);
  for (const [name, values] of Object.entries(cpu)) console.log(`${name.padEnd(9)} client CPU ${mean(values).toFixed(0).padStart(5)} us/request  (rounds: ${values.map((v) => v.toFixed(0)).join(', ')})`);
  console.log(`HTTP/2 / HTTP/1.1: ${(mean(cpu['HTTP/2']!) / mean(cpu['HTTP/1.1']!)).toFixed(2)}x`);
  await Promise.all([admin, ...Object.values(clients)].map((c) => c.close()));
} finally {
  await plane.stop();
}
