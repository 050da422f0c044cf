// Child process of bench/tenants-scale.bench.ts: the busy tenants' load, apart from the bench's own process (which
// then only writes and times the quiet tenant's changes). Args: kubeconfig, phase ms, objects per tenant, namespaces.
// Each namespace's `objects` ConfigMaps (the bench created them before the phase: the creates' burst is not the busy
// load being measured) are patched until the phase ends; prints {"patches": n, "failed": m, "late": k}.
// With CHURN_AS_SERVICE_ACCOUNT each namespace writes as that ServiceAccount of its own (impersonated), not as admin.
// With CHURN_RATE (changes per second per namespace) the patches leave on a fixed schedule instead of as fast as the
// API server answers 8 at a time; a tick that finds 8 still in flight is skipped and counted as late (the rate capped).
// The namespaces' schedules are spread over the period (CHURN_IN_STEP=1: all on the same instant).
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeClient, loadKubeConfig, serviceAccountUser } from '../lib/kube/index.ts';
import { pool } from './router-bench-kit.ts';

const [kubeconfig, phaseMs, objects, ...namespaces] = process.argv.slice(2);
const OBJECTS = Number(objects);
const RATE = Number(process.env.CHURN_RATE ?? 0);
const IN_FLIGHT = 8;
const deadline = performance.now() + Number(phaseMs);
// In every value written, so each patch changes its object (the objects outlive a phase; a patch that writes the value
// already there is no change: no event, no reconcile).
const PHASE = Date.now().toString(36);
const admin = await KubeClient.fromKubeConfig(await loadKubeConfig({ kubeconfig: kubeconfig! }), { rateLimit: { qps: 1000, burst: 1000 } });
const as = process.env.CHURN_AS_SERVICE_ACCOUNT;
let patches = 0;
// A write refused under load (a hooked namespace's webhook timing out, a 429) is counted, not fatal: the phase goes on.
let failed = 0;
let late = 0;
const attempt = (write: () => Promise<unknown>) => write().catch(() => void (failed += 1));

/** As fast as the API server answers, 8 patches in flight per namespace. */
async function flatOut(patch: (n: number, round: number) => Promise<void>): Promise<void> {
  for (let round = 0; performance.now() < deadline; round++) await pool(0, OBJECTS, IN_FLIGHT, (n) => patch(n, round));
}

/**
 * One patch every 1/RATE s, round-robin over the objects, at most 8 in flight. Namespace `index` of the `count` starts
 * index/count of a period later, so independent teams' writes do not all leave at the same instant (CHURN_IN_STEP=1:
 * they do, a burst of `count` changes every period).
 */
async function paced(patch: (n: number, round: number) => Promise<void>, index: number, count: number): Promise<void> {
  const start = performance.now() + (process.env.CHURN_IN_STEP === '1' ? 0 : (index * 1000) / RATE / count);
  const inFlight = new Set<Promise<void>>();
  for (let tick = 0; ; tick++) {
    const due = start + (tick * 1000) / RATE;
    if (due >= deadline) break;
    await sleep(Math.max(0, due - performance.now()));
    if (inFlight.size >= IN_FLIGHT) {
      late += 1;
      continue;
    }
    const write = patch(tick % OBJECTS, Math.floor(tick / OBJECTS)).finally(() => inFlight.delete(write));
    inFlight.add(write);
  }
  await Promise.all(inFlight);
}

await Promise.all(
  namespaces.map(async (ns, index) => {
    const client = as ? admin.impersonating({ user: serviceAccountUser(ns!, as) }, { qps: 1000, burst: 1000 }) : admin;
    const patch = async (n: number, round: number) => {
      await attempt(async () => {
        await client.request({ method: 'PATCH', path: `/api/v1/namespaces/${ns}/configmaps/busy-${n}`, contentType: 'application/merge-patch+json', body: { data: { setting: `${PHASE}-${round}-${n}` } } });
        patches += 1;
      });
    };
    await (RATE > 0 ? paced(patch, index, namespaces.length) : flatOut(patch));
  }),
);
await admin.close();
console.log(JSON.stringify({ patches, failed, late }));
