// Part (3) of bench:webhook: pod creates through a real API server, one at a time and interleaved over four
// namespaces: no webhook (the baseline), the floor (a bare node:https webhook allowing everything), the
// AdmissionHook path (gateway + require-label function, the main case) and the Watcher sidecar webhook.
// Beside the client's clock it reads where the time went: the API server's own webhook and admission-step
// metrics, the gateway's, and each process's CPU time and run-queue wait (/proc schedstat).
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { parse } from 'yaml';
import { generateBundle } from '../certs/generate.ts';
import type { AdmissionHook } from '../api/admission-hook.ts';
import { gatewayClientAuthArgs } from '../cli/cluster/webhook-client-auth.ts';
import { grantHookContext } from '../cli/dev/sample-admission-hooks.ts';
import { KubeClient, ResourceDiscovery } from '../lib/kube/index.ts';
import { startBenchPlane } from './bench-plane.ts';
import { figures, type SpawnedServer } from './autocannon-kit.ts';
import { delta, machineLoad, parsePrometheusText, processTime, timeSince, verdict, type ProcessTime, type Sample } from './process-figures.ts';

const ms = (value: number): string => `${value.toFixed(2)} ms`;
const signed = (value: number): string => `${value >= 0 ? '+' : ''}${ms(value)}`;
const SERIES = ['plain', 'floor', 'gateway', 'sidecar'] as const;
type Series = (typeof SERIES)[number];
const NAMESPACE: Record<Series, string> = { plain: 'bench-plain', floor: 'bench-floor', gateway: 'bench-gateway', sidecar: 'bench-sidecar' };
/** The webhook name the API server labels its metrics with, per series. */
const WEBHOOK: Record<Exclude<Series, 'plain'>, string> = {
  floor: 'floor.bench.kubeloop.dev',
  gateway: 'bench-require-label.hooks.kubeloop.dev',
  sidecar: 'watcher-sidecar.hooks.kubeloop.dev',
};
const LABEL: Record<Series, string> = {
  plain: 'no webhook (baseline)',
  floor: 'floor: bare node:https allow-all',
  gateway: 'gateway + require-label function',
  sidecar: 'Watcher sidecar (mutating)',
};

export interface ApiServerBenchOptions {
  root: string;
  pods: number;
}

export async function throughApiServer({ root, pods }: ApiServerBenchOptions): Promise<void> {
  const { plane, client, kubectl, spawn, close } = await startBenchPlane(root, ['watchers.watch.kubeloop.dev', 'clusteradmissionhooks.kubeloop.dev']);
  try {
    for (const ns of Object.values(NAMESPACE)) {
      await kubectl('create', 'namespace', ns);
      await kubectl('wait', '--for=jsonpath={.metadata.name}=default', '--timeout=60s', '-n', ns, 'serviceaccount/default');
    }
    await client.request({
      method: 'POST',
      path: `/apis/watch.kubeloop.dev/v1alpha1/namespaces/${NAMESPACE.sidecar}/watchers`,
      body: { apiVersion: 'watch.kubeloop.dev/v1alpha1', kind: 'Watcher', metadata: { name: 'logwatch' }, spec: { container: { name: 'logwatch', image: 'busybox:1.36' }, volume: { name: 'watch-data', emptyDir: {} } } },
    });

    const floor = await startFloor(root, client, spawn);
    const fn = await spawn([join(root, 'bench/admission-bench-server.ts'), 'function']);
    const webhook = await spawn(
      // As kubeloop dev runs it: only the plane's API server (its webhook client certificate) is let in. Its url is the ops port's (/metrics).
      ['cli/main.ts', 'webhook', '--dev', '--port=0', '--ops-port=0', '--host=127.0.0.1', `--kubeconfig=${plane.kubeconfigPath}`, '--namespace=bench-kubeloop', `--only-namespace=${NAMESPACE.sidecar}`, `--only-namespace=${NAMESPACE.gateway}`, ...gatewayClientAuthArgs(plane.dir)],
      (line) => (line.includes('"webhook serving"') ? (JSON.parse(line) as { opsUrl: string }).opsUrl : undefined),
    );
    // The Watcher sidecar injector: its function behind the sample AdmissionHook, limited to its namespace.
    const injector = await spawn(['cli/main.ts', 'function', 'watcher-sidecar', '--port=0', '--host=127.0.0.1'], (line) =>
      line.includes('"serving function watcher-sidecar"') ? (JSON.parse(line) as { url: string }).url : undefined,
    );
    const sidecarHook = parse(await readFile(join(root, 'samples/admission-hooks/watcher-sidecar.yaml'), 'utf8')) as { spec: Record<string, unknown> };
    sidecarHook.spec.function = { url: `${injector.url}/admit` };
    sidecarHook.spec.namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': NAMESPACE.sidecar } };
    await grantHookContext(client, new ResourceDiscovery(client), sidecarHook as unknown as AdmissionHook);
    await client.request({ method: 'POST', path: '/apis/kubeloop.dev/v1alpha1/clusteradmissionhooks', body: sidecarHook });
    await client.request({
      method: 'POST',
      path: '/apis/kubeloop.dev/v1alpha1/clusteradmissionhooks',
      body: {
        apiVersion: 'kubeloop.dev/v1alpha1',
        kind: 'ClusterAdmissionHook',
        metadata: { name: 'bench-require-label' },
        spec: {
          type: 'validating',
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NAMESPACE.gateway } },
          function: { url: `${fn.url}/admit` },
          serviceAccount: { namespace: NAMESPACE.gateway, name: 'require-label' },
        },
      },
    });

    const pod = (series: Series, name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      // Same shape everywhere; only the sidecar series opts in to injection (its CEL condition reads the annotation).
      metadata: { name, labels: { team: 'bench' }, ...(series === 'sidecar' ? { annotations: { 'watch.kubeloop.dev/watcher': 'logwatch' } } : {}) },
      spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] },
    });
    const create = async (series: Series, name: string): Promise<number> => {
      const start = performance.now();
      await client.request({ method: 'POST', path: `/api/v1/namespaces/${NAMESPACE[series]}/pods`, body: pod(series, name) });
      return performance.now() - start;
    };
    // The gateway serves the hook once its configuration is written and the API server has read it:
    // an unlabelled dry-run pod is denied from then on.
    await untilDenied(client, NAMESPACE.gateway);
    for (let i = 0; i < 20; i++) for (const series of SERIES) await create(series, `warm-${i}`);

    const apiServerPid = plane.pids()['kube-apiserver']!;
    const pids = { 'kube-apiserver': apiServerPid, webhook: webhook.child.pid!, function: fn.child.pid!, floor: floor.child.pid! };
    const apiBefore = await scrape(kubectl);
    const hookBefore = await scrapeWebhook(webhook.url);
    // Node serves every request on its main thread (the event loop): its run-queue wait is on the request's
    // path. The Go API server runs goroutines on any thread: all its threads count.
    const mainOnly = (name: string) => name !== 'kube-apiserver';
    const timesBefore = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, processTime(pid, mainOnly(name))])) as Record<keyof typeof pids, ProcessTime>;
    const latencies = Object.fromEntries(SERIES.map((s) => [s, [] as number[]])) as Record<Series, number[]>;
    // Interleaved, one at a time: every series sees the same API server, etcd and machine load.
    for (let i = 0; i < pods; i++) for (const series of SERIES) latencies[series].push(await create(series, `p-${i}`));
    const times = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, timeSince(timesBefore[name as keyof typeof pids], pid, mainOnly(name))])) as Record<keyof typeof pids, ProcessTime>;
    const apiAfter = await scrape(kubectl);
    const hookAfter = await scrapeWebhook(webhook.url);

    const injected = await client.request<{ items: Array<{ spec: { containers: unknown[] } }> }>({ path: `/api/v1/namespaces/${NAMESPACE.sidecar}/pods` });
    const withSidecar = injected.items.filter((p) => p.spec.containers.length === 2).length;
    const base = figures(latencies.plain, pods, 1);
    console.log(`\nThrough the API server (kube-apiserver ${plane.server}), ${pods} sequential pod creates per series, interleaved`);
    console.log(`  ${'series'.padEnd(36)} ${'p50'.padStart(9)} ${'p99'.padStart(9)}  ${'added p50'.padStart(9)} ${'added p99'.padStart(9)}  API server's webhook call (mean, calls, rejections)`);
    for (const series of SERIES) {
      const f = figures(latencies[series], pods, 1);
      const added = series === 'plain' ? '' : `${ms(f.p50 - base.p50).padStart(9)} ${ms(f.p99 - base.p99).padStart(9)}`;
      const call = series === 'plain' ? '' : webhookCall(apiBefore, apiAfter, WEBHOOK[series]);
      console.log(`  ${LABEL[series].padEnd(36)} ${ms(f.p50).padStart(9)} ${ms(f.p99).padStart(9)}  ${added.padEnd(19)}  ${call}`);
    }
    const [floor50, gateway50, sidecar50] = (['floor', 'gateway', 'sidecar'] as const).map((series) => figures(latencies[series], pods, 1).p50);
    const gateway = figures(latencies.gateway, pods, 1);
    const added99 = gateway.p99 - base.p99;
    console.log(`  main case (gateway) added p99 ${ms(added99)}: target <= 10 ms ${verdict(added99, 10)}; p99 ratio gateway/baseline ${(gateway.p99 / base.p99).toFixed(2)}`);
    console.log(`  over the floor (what is ours, not any webhook's): gateway p50 ${signed(gateway50! - floor50!)}, sidecar p50 ${signed(sidecar50! - floor50!)}; sidecar pods injected ${withSidecar}/${injected.items.length}`);

    console.log(`  where the time goes (${machineLoad()} at the end of the loop):`);
    const hookCount = delta(hookBefore, hookAfter, 'kubeloop_admission_hook_duration_seconds_count', { hook: 'bench-require-label' });
    const hookSum = delta(hookBefore, hookAfter, 'kubeloop_admission_hook_duration_seconds_sum', { hook: 'bench-require-label' });
    if (hookCount > 0) console.log(`    gateway handler incl. the function call: mean ${ms((hookSum / hookCount) * 1000)} over ${hookCount} calls`);
    const injectCount = delta(hookBefore, hookAfter, 'kubeloop_webhook_admission_duration_seconds_count', { outcome: 'injected' });
    const injectSum = delta(hookBefore, hookAfter, 'kubeloop_webhook_admission_duration_seconds_sum', { outcome: 'injected' });
    if (injectCount > 0) console.log(`    sidecar handler (parse, lookup, patch): mean ${ms((injectSum / injectCount) * 1000)} over ${injectCount} calls`);
    const creates = pods * SERIES.length;
    const calls: Record<keyof typeof pids, number> = { 'kube-apiserver': creates, webhook: pods * 2, function: pods, floor: pods };
    for (const [name, time] of Object.entries(times) as Array<[keyof typeof pids, ProcessTime]>) {
      const per = calls[name];
      const what = mainOnly(name) ? 'event loop thread' : 'all threads';
      console.log(`    ${name.padEnd(15)} CPU ${ms(time.cpuMs / per)}  runnable but waiting for a CPU ${ms(time.waitMs / per)}  per ${name === 'kube-apiserver' ? 'create' : 'call'} (${what})`);
    }
    console.log(`    TLS connections the API server opened to the webhook: ${delta([], hookAfter, 'kubeloop_webhook_tls_connections_total')} in all`);
  } finally {
    await close();
  }
}

async function scrape(kubectl: (...args: string[]) => Promise<{ stdout: string }>): Promise<Sample[]> {
  return parsePrometheusText((await kubectl('get', '--raw', '/metrics')).stdout);
}

/** The gateway's /metrics, on its plain HTTP ops port. */
async function scrapeWebhook(opsUrl: string): Promise<Sample[]> {
  return parsePrometheusText(await (await request(`${opsUrl}/metrics`)).body.text());
}

function webhookCall(before: Sample[], after: Sample[], name: string): string {
  const count = delta(before, after, 'apiserver_admission_webhook_admission_duration_seconds_count', { name });
  const sum = delta(before, after, 'apiserver_admission_webhook_admission_duration_seconds_sum', { name });
  const rejections = delta(before, after, 'apiserver_admission_webhook_rejection_count', { name });
  return count > 0 ? `${ms((sum / count) * 1000)}, ${count}, ${rejections}` : 'not called';
}

/** The floor webhook as a child process, registered for its namespace with a ValidatingWebhookConfiguration. */
async function startFloor(root: string, client: KubeClient, spawn: (args: string[]) => Promise<SpawnedServer>): Promise<SpawnedServer> {
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-floor-'));
  const bundle = await generateBundle({ now: new Date(), identity: { service: 'kubeloop-webhook', namespace: 'kubeloop' } });
  await writeFile(join(dir, 'tls.crt'), bundle.serving.certPem);
  await writeFile(join(dir, 'tls.key'), bundle.serving.keyPem);
  const floor = await spawn([join(root, 'bench/webhook-bench-server.ts'), 'floor', join(dir, 'tls.crt'), join(dir, 'tls.key')]);
  await client.request({
    method: 'POST',
    path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'bench-floor' },
      webhooks: [
        {
          name: WEBHOOK.floor,
          admissionReviewVersions: ['v1'],
          clientConfig: { url: `${floor.url}/validate`, caBundle: Buffer.from(bundle.ca.certPem).toString('base64') },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NAMESPACE.floor } },
          sideEffects: 'None',
          timeoutSeconds: 5,
          failurePolicy: 'Fail',
        },
      ],
    },
  });
  return floor;
}

async function untilDenied(client: KubeClient, namespace: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await client.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/pods?dryRun=All`, body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe' }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } });
    } catch (error) {
      if (String(error).includes('"team" label')) return;
      throw error;
    }
    if (Date.now() > deadline) throw new Error('the bench AdmissionHook was not served within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
