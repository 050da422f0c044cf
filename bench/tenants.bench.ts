// npm run bench:tenants, on a private local control plane: a quiet tenant (BENCH_QUIET 50 ConfigMaps, one
// changed every 100 ms) beside a noisy one (BENCH_NOISY 5,000 ConfigMaps created at once, a function taking
// BENCH_SLOW_MS 100 ms per call that labels each). The quiet tenant's reconcile latency (its change written ->
// its function called) alone and with the neighbour busy, in the same run, with fairness off (each Loop on
// its own, the behaviour before) and on (the defaults). Goal: p99 with the neighbour <= 1.5x without it.
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import type { Loop } from '../api/loop.ts';
import { startControlPlane } from '../cli/cluster/index.ts';
import type { ReconcileRequest } from '../lib/contract/types.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { DEFAULT_FUNCTION_URL_POLICY } from '../lib/config/function-url-policy.ts';
import { startRouter } from '../router/index.ts';
import { LOOP_SERVICE_ACCOUNT } from '../test/support/loop-service-account.ts';
import { createNamespace, percentile, pool } from './router-bench-kit.ts';

const QUIET = Number(process.env.BENCH_QUIET ?? 50);
const NOISY = Number(process.env.BENCH_NOISY ?? 5000);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 100);
const PHASE_MS = Number(process.env.BENCH_PHASE_SECONDS ?? 15) * 1000;
const CHANGE_EVERY_MS = 100;
const CHANGED_AT = 'bench.kubeloop.dev/changed-at';

type Variant = 'fairness off' | 'fairness on';
type Phase = 'alone' | 'with neighbour';

function tenantLoop(name: string, namespace: string, maxConcurrency: number): Loop {
  return {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'Loop',
    metadata: { name, namespace, generation: 1 },
    spec: {
      for: { apiVersion: 'v1', kind: 'ConfigMap' },
      selector: { matchLabels: { app: 'bench' } },
      serviceAccount: { namespace, name: LOOP_SERVICE_ACCOUNT },
      namespaces: [namespace],
      // Called in-process (invoke below); the URL is never dialled.
      function: { url: 'http://127.0.0.1:1/', maxConcurrency },
    },
  };
}

const configMap = (name: string) => ({ metadata: { name, labels: { app: 'bench' } }, data: { setting: 'x' } });

async function run(client: KubeClient, kubeConfig: ReturnType<Awaited<ReturnType<typeof startControlPlane>>['kubeConfig']>, variant: Variant, quietNs: string, noisyNs: string) {
  const samples: Record<Phase, number[]> = { alone: [], 'with neighbour': [] };
  let phase: Phase = 'alone';
  let noisyCalls = 0;
  const router = await startRouter({
    kubeConfig,
    loops: [tenantLoop('quiet', quietNs, 8), tenantLoop('noisy', noisyNs, 64)],
    urlPolicy: { ...DEFAULT_FUNCTION_URL_POLICY, allowLoopback: true },
    logger: pino({ level: 'warn' }, process.stderr),
    ...(variant === 'fairness off' ? { fairness: false as const } : {}),
    invoke: async (request: ReconcileRequest) => {
      const object = request.object;
      if (request.loop === 'quiet') {
        const at = Number(object?.metadata?.annotations?.[CHANGED_AT]);
        if (at > 0 && request.trigger?.type === 'MODIFIED') samples[phase].push(Date.now() - at);
        return { kind: 'ok', status: 200, response: { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] } };
      }
      await sleep(SLOW_MS);
      noisyCalls += 1;
      const done = object?.metadata?.labels?.done === 'true';
      return {
        kind: 'ok',
        status: 200,
        response: {
          apiVersion: 'kubeloop.dev/v1',
          kind: 'ReconcileResponse',
          actions: done ? [] : [{ op: 'patch', target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: noisyNs, name: object?.metadata?.name ?? '' }, patch: [{ op: 'add', path: '/metadata/labels/done', value: 'true' }] }],
        },
      };
    },
  });
  await router.waitForLoop(`${quietNs}/quiet`, 120_000);
  await router.waitForLoop(`${noisyNs}/noisy`, 120_000);
  const change = async (until: () => boolean) => {
    for (let i = 0; until(); i += 1) {
      const name = `quiet-${i % QUIET}`;
      void client.request({ method: 'PATCH', path: `/api/v1/namespaces/${quietNs}/configmaps/${name}`, contentType: 'application/merge-patch+json', body: { metadata: { annotations: { [CHANGED_AT]: String(Date.now()) } } } });
      await sleep(CHANGE_EVERY_MS);
    }
  };
  let deadline = Date.now() + PHASE_MS;
  await change(() => Date.now() < deadline);
  await sleep(1000);
  phase = 'with neighbour';
  const started = Date.now();
  const creating = pool(0, NOISY, 50, async (i) => {
    await client.request({ method: 'POST', path: `/api/v1/namespaces/${noisyNs}/configmaps`, body: configMap(`noisy-${i}`) });
  });
  // The quiet tenant keeps changing while the noisy backlog is there (at least a phase, at most until it drained).
  deadline = Date.now() + PHASE_MS;
  await change(() => Date.now() < deadline || (noisyCalls < NOISY && Date.now() - started < 10 * PHASE_MS));
  const backlogLeft = NOISY - noisyCalls;
  await creating;
  await sleep(1000);
  await router.stop();
  return { samples, backlogLeft };
}

const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

async function main(): Promise<void> {
  const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
  console.log(`bench:tenants: quiet ${QUIET} objects, a change every ${CHANGE_EVERY_MS} ms; noisy ${NOISY} objects at once, ${SLOW_MS} ms per call; ${uptime()}`);
  const plane = await startControlPlane({ onProgress: (m) => console.error(`[control-plane] ${m}`) });
  const client = await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: { qps: 0, burst: 1 } });
  try {
    await createNamespace(client, 'bench-quiet');
    await pool(0, QUIET, 20, async (i) => {
      await client.request({ method: 'POST', path: '/api/v1/namespaces/bench-quiet/configmaps', body: configMap(`quiet-${i}`) });
    });
    const rows: Array<{ variant: Variant; alone: number[]; busy: number[]; backlogLeft: number }> = [];
    for (const variant of ['fairness off', 'fairness on'] as const) {
      const noisyNs = `bench-noisy-${variant === 'fairness off' ? 'off' : 'on'}`;
      await createNamespace(client, noisyNs);
      const { samples, backlogLeft } = await run(client, plane.kubeConfig(), variant, 'bench-quiet', noisyNs);
      rows.push({ variant, alone: samples.alone, busy: samples['with neighbour'], backlogLeft });
    }
    console.log(`\nquiet tenant's reconcile latency (change written -> function called); ${uptime()}`);
    for (const row of rows) {
      const [a50, a99, b50, b99] = [percentile(row.alone, 50), percentile(row.alone, 99), percentile(row.busy, 50), percentile(row.busy, 99)];
      console.log(`${row.variant.padEnd(13)} alone: p50 ${fmt(a50)} p99 ${fmt(a99)} (${row.alone.length}) | with neighbour: p50 ${fmt(b50)} p99 ${fmt(b99)} (${row.busy.length}; noisy backlog left when the phase ended: ${row.backlogLeft}) | p99 ratio ${(b99 / a99).toFixed(2)}x [goal <= 1.5x]`);
    }
  } finally {
    await client.close();
    await plane.stop();
  }
}

await main();
