// `npm run bench:diff`: wall time and API calls of `kubeloop diff --loop` over BENCH_DIFF_PODS (default 2000)
// kwok pods, as the CLI runs (a child process, from source), 10 % of them annotated so that the new version
// (another label) differs there and its patch is dry-run. API calls are the client's own count (-o json).
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startControlPlane } from '../cli/cluster/index.ts';
import podNameLabel from '../functions/pod-name-label/index.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { serveForTest } from '../lib/testing/serve.ts';
import { LOOP_SERVICE_ACCOUNT } from '../test/support/loop-service-account.ts';
import { installCrds } from '../test/support/router-harness.ts';
import { createNamespace, createPods, NODES, ROOT } from './router-bench-kit.ts';

const PODS = Number(process.env.BENCH_DIFF_PODS ?? 2000);
const QPS = (process.env.BENCH_DIFF_QPS ?? '50,200').split(',').map(Number);
const CONCURRENCY = Number(process.env.BENCH_DIFF_CONCURRENCY ?? 8);
const NAMESPACE = 'bench-diff';
const ANNOTATION = 'kubeloop.dev/add-pod-name-label';

async function main(): Promise<void> {
  const plane = await startControlPlane({ nodes: NODES, onProgress: (line) => process.stderr.write(`[control-plane] ${line}\n`) });
  const client = await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: { qps: 0, burst: 0 } });
  const baseline = await serveForTest(podNameLabel);
  try {
    await installCrds(client, ['clusterloops.kubeloop.dev.yaml']);
    await createNamespace(client, NAMESPACE);
    const annotated = Math.round(PODS / 10);
    await createPods(client, NAMESPACE, 0, PODS - annotated);
    await createPods(client, NAMESPACE, PODS - annotated, PODS, { [ANNOTATION]: 'true' });
    await client.request({
      method: 'POST',
      path: '/apis/kubeloop.dev/v1alpha1/clusterloops',
      body: {
        apiVersion: 'kubeloop.dev/v1alpha1',
        kind: 'ClusterLoop',
        metadata: { name: 'bench-diff' },
        spec: { serviceAccount: { namespace: NAMESPACE, name: LOOP_SERVICE_ACCOUNT }, namespaces: [NAMESPACE], for: { apiVersion: 'v1', kind: 'Pod' }, metadataOnly: true, function: { url: `${baseline.url}/` } },
      },
    });
    const candidate = join(ROOT, 'test/fixtures/diff/pod-name-label-v2.ts');
    console.log(`kubeloop diff --loop over ${PODS} pods (${annotated} differ), concurrency ${CONCURRENCY}, from source (tsx)`);
    console.log('qps   exit  changed  unchanged  errors  api calls  own seconds  wall seconds (incl. start-up)  load (1m)');
    for (const qps of QPS) {
      const load = loadavg()[0]!.toFixed(1);
      const started = performance.now();
      const { stdout, code } = await promisify(execFile)(process.execPath, [join(ROOT, 'cli/bin.js'), 'diff', '--loop', 'bench-diff', '--function', candidate, '-o', 'json', '--qps', String(qps), '--concurrency', String(CONCURRENCY)], {
        env: { ...process.env, KUBECONFIG: plane.kubeconfigPath, KUBELOOP_FROM_SOURCE: '1' },
        maxBuffer: 256 * 1024 * 1024,
      }).then(
        (r) => ({ stdout: r.stdout, code: 0 }),
        (error: { stdout?: string; code?: number }) => ({ stdout: error.stdout ?? '', code: error.code ?? -1 }),
      );
      const wall = (performance.now() - started) / 1000;
      const report = JSON.parse(stdout) as { summary: { changed: number; unchanged: number; errors: number }; apiCalls: number; seconds: number };
      console.log(
        [qps, code, report.summary.changed, report.summary.unchanged, report.summary.errors, report.apiCalls, report.seconds.toFixed(1), wall.toFixed(1), load]
          .map(String)
          .join('  '),
      );
    }
  } finally {
    await baseline.close();
    await client.close();
    await plane.stop();
  }
}

await main();
