// npx tsx bench/http2-writes.bench.ts: client CPU per API write of KubeClient as the router has it (undici,
// HTTP/2 by ALPN) against KubeClient with `http2Writes` (writes over node:http2, lib/kube/node-http2-writes.ts),
// on a private local control plane, in one process and one run, rounds alternating which goes first. The
// router's kind of write: a JSON merge PATCH of an object's labels, BENCH_IN_FLIGHT (16) at a time.
import { startControlPlane } from '../cli/cluster/index.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { alternatingRounds, mean } from './alternating-rounds.ts';
import { machineLoad } from './process-figures.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 16);
const NAMESPACE = 'http2-writes-bench';
const PATH = `/api/v1/namespaces/${NAMESPACE}/configmaps/target`;

const plane = await startControlPlane({ nodes: 1, onProgress: (line) => process.stderr.write(`[control-plane] ${line}\n`) });
try {
  const unlimited = { qps: 0, burst: 0 };
  const clients = {
    'undici (today)': await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: unlimited }),
    'node:http2 writes': await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: unlimited, http2Writes: true }),
  };
  const today = clients['undici (today)'];
  await today.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NAMESPACE } } });
  await today.request({ method: 'POST', path: `/api/v1/namespaces/${NAMESPACE}/configmaps`, body: { metadata: { name: 'target' }, data: { a: 'b' } } });
  const run = async (client: KubeClient): Promise<number> => {
    let next = 0;
    const worker = async () => {
      while (next < REQUESTS) {
        const i = next++;
        await client.request({ method: 'PATCH', path: PATH, contentType: 'application/merge-patch+json', body: { metadata: { labels: { round: String(i) } } } });
      }
    };
    const before = process.cpuUsage();
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    const used = process.cpuUsage(before);
    return (used.user + used.system) / REQUESTS;
  };
  const cpu = await alternatingRounds(clients, ROUNDS, run);
  console.log(`\n${REQUESTS} merge PATCHes per round and client, ${IN_FLIGHT} in flight, ${ROUNDS} rounds alternating (${machineLoad()} at the end)`);
  for (const [name, values] of Object.entries(cpu)) console.log(`  ${name.padEnd(18)} client CPU ${mean(values).toFixed(0).padStart(5)} us/PATCH  (rounds: ${values.map((v) => v.toFixed(0)).join(', ')})`);
  console.log(`  node:http2 writes / today: ${(mean(cpu['node:http2 writes']!) / mean(cpu['undici (today)']!)).toFixed(2)}x`);
  await Promise.all(Object.values(clients).map((c) => c.close()));
} finally {
  await plane.stop();
}
