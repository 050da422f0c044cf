// Child process of bench/tenants-scale.bench.ts: the busy tenants' load, apart from the bench's own process (which
// then only writes and times the quiet tenant's changes). Args: kubeconfig, phase ms, objects per tenant, namespaces.
// Each namespace gets `objects` ConfigMaps, patched in rounds until the phase ends; prints {"rounds": n, "failed": m}.
// With CHURN_AS_SERVICE_ACCOUNT each namespace writes as that ServiceAccount of its own (impersonated), not as admin.
import { KubeClient, loadKubeConfig, serviceAccountUser } from '../lib/kube/index.ts';
import { pool } from './router-bench-kit.ts';

const [kubeconfig, phaseMs, objects, ...namespaces] = process.argv.slice(2);
const OBJECTS = Number(objects);
const deadline = performance.now() + Number(phaseMs);
const admin = await KubeClient.fromKubeConfig(await loadKubeConfig({ kubeconfig: kubeconfig! }), { rateLimit: { qps: 1000, burst: 1000 } });
const configMap = (name: string) => ({ metadata: { name, labels: { app: 'bench', team: 'bench', busy: 'true' } }, data: { setting: 'x' } });
const as = process.env.CHURN_AS_SERVICE_ACCOUNT;
let rounds = 0;
// A write refused under load (a hooked namespace's webhook timing out, a 429) is counted, not fatal: the phase goes on.
let failed = 0;
const attempt = (write: () => Promise<unknown>) => write().catch(() => void (failed += 1));
await Promise.all(
  namespaces.map(async (ns) => {
    const client = as ? admin.impersonating({ user: serviceAccountUser(ns!, as) }, { qps: 1000, burst: 1000 }) : admin;
    await pool(0, OBJECTS, 8, async (n) => {
      await attempt(() => client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: configMap(`busy-${n}`) }));
    });
    for (let round = 0; performance.now() < deadline; round++, rounds++) {
      await pool(0, OBJECTS, 8, async (n) => {
        await attempt(() => client.request({ method: 'PATCH', path: `/api/v1/namespaces/${ns}/configmaps/busy-${n}`, contentType: 'application/merge-patch+json', body: { data: { setting: String(round) } } }));
      });
    }
  }),
);
await admin.close();
console.log(JSON.stringify({ rounds, failed }));
