// Part (4) of bench:webhook (BENCH_PARTS=tenants): what namespaced AdmissionHooks of other teams cost a pod
// create in a namespace without any. Pod creates through a real API server with 0 (no webhook at all), 1, 10
// and 100 namespaced hooks of one shape in 100 other namespaces, in rounds, so every count sees the same
// machine; the gateway groups them into one webhook entry whose namespaceSelector lists their namespaces.
// For comparison, the same 100 hooks as one entry each (ClusterAdmissionHooks selecting one namespace).
import { join } from 'node:path';
import type { V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { gatewayClientAuthArgs } from '../cli/cluster/webhook-client-auth.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { startBenchPlane } from './bench-plane.ts';
import { figures } from './autocannon-kit.ts';
import { machineLoad } from './process-figures.ts';
import { tenantConfigurationName } from '../webhooks/index.ts';

const COUNTS = [0, 1, 10, 100] as const;
/** The series beside the counts: 100 hooks with one webhook entry each. */
const PER_HOOK = -100;
const MEASURED = 'bench-measured';
const CONFIGURATIONS = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/';
const ms = (value: number): string => `${value.toFixed(2)} ms`;
const other = (i: number): string => `bench-team-${String(i).padStart(3, '0')}`;

export interface TenantBenchOptions {
  root: string;
  /** Pod creates per hook count per round. */
  pods: number;
  rounds: number;
}

export async function namespacedHooksThroughApiServer({ root, pods, rounds }: TenantBenchOptions): Promise<void> {
  const { plane, client, kubectl, spawn, close } = await startBenchPlane(root, ['clusteradmissionhooks.kubeloop.dev', 'admissionhooks.kubeloop.dev']);
  try {
    for (const ns of [MEASURED, ...Array.from({ length: 100 }, (_, i) => other(i + 1))]) {
      await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    }
    await kubectl('wait', '--for=jsonpath={.metadata.name}=default', '--timeout=60s', '-n', MEASURED, 'serviceaccount/default');
    const fn = await spawn([join(root, 'bench/admission-bench-server.ts'), 'function']);
    // As the chart runs it: every namespace but the system ones may be sent to it.
    await spawn(
      ['cli/main.ts', 'webhook', '--dev', '--port=0', '--ops-port=0', '--host=127.0.0.1', `--kubeconfig=${plane.kubeconfigPath}`, '--namespace=bench-kubeloop', '--tenant-configurations=1', ...gatewayClientAuthArgs(plane.dir)],
      (line) => (line.includes('"webhook serving"') ? (JSON.parse(line) as { opsUrl: string }).opsUrl : undefined),
    );
    let hooks = 0;
    const setHooks = async (count: number) => {
      for (; hooks < count; hooks++) {
        await client.request({
          method: 'POST',
          path: `/apis/kubeloop.dev/v1alpha1/namespaces/${other(hooks + 1)}/admissionhooks`,
          body: {
            apiVersion: 'kubeloop.dev/v1alpha1',
            kind: 'AdmissionHook',
            metadata: { name: 'require-label' },
            spec: { type: 'validating', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], function: { url: `${fn.url}/admit` }, serviceAccount: { name: 'require-label' } },
          },
        });
      }
      for (; hooks > count; hooks--) await client.request({ method: 'DELETE', path: `/apis/kubeloop.dev/v1alpha1/namespaces/${other(hooks)}/admissionhooks/require-label` });
      await untilInEffect(client, count === 0 ? { entries: 0, admits: other(1) } : { namespaces: count, denies: other(count) });
    };
    const perHookEntries = async (on: boolean) => {
      for (let i = 1; i <= 100; i++) {
        const name = `per-hook-${String(i).padStart(3, '0')}`;
        if (!on) {
          await client.request({ method: 'DELETE', path: `/apis/kubeloop.dev/v1alpha1/clusteradmissionhooks/${name}` });
          continue;
        }
        await client.request({
          method: 'POST',
          path: '/apis/kubeloop.dev/v1alpha1/clusteradmissionhooks',
          body: {
            apiVersion: 'kubeloop.dev/v1alpha1',
            kind: 'ClusterAdmissionHook',
            metadata: { name },
            spec: {
              type: 'validating',
              rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': other(i) } },
              function: { url: `${fn.url}/admit` },
              serviceAccount: { namespace: other(i), name: 'require-label' },
            },
          },
        });
      }
      await untilInEffect(client, on ? { entries: 100, denies: other(100) } : { entries: 0, admits: other(1) });
    };
    const create = async (name: string): Promise<number> => {
      const start = performance.now();
      await client.request({ method: 'POST', path: `/api/v1/namespaces/${MEASURED}/pods`, body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { team: 'bench' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } });
      return performance.now() - start;
    };
    for (let i = 0; i < 20; i++) await create(`warm-${i}`);
    const latencies = new Map<number, number[]>([...COUNTS, PER_HOOK].map((count) => [count, []]));
    const entries = new Map<number, number>();
    for (let round = 0; round < rounds; round++) {
      // Ascending, then back to none: the baseline is measured at the start of every round.
      for (const count of COUNTS) {
        await setHooks(count);
        entries.set(count, (await configuration(client))?.webhooks?.length ?? 0);
        for (let i = 0; i < pods; i++) latencies.get(count)!.push(await create(`r${round}-n${count}-${i}`));
      }
      await setHooks(0);
      await perHookEntries(true);
      entries.set(PER_HOOK, (await configuration(client))?.webhooks?.length ?? 0);
      for (let i = 0; i < pods; i++) latencies.get(PER_HOOK)!.push(await create(`r${round}-per-hook-${i}`));
      await perHookEntries(false);
    }
    const base = figures(latencies.get(0)!, 1, 1);
    console.log(`\nNamespaced hooks of other teams (kube-apiserver ${plane.server}): ${rounds} rounds x ${pods} sequential pod creates in a namespace without hooks per count`);
    console.log(`  ${'hooks in other namespaces'.padEnd(28)} ${'entries'.padStart(7)} ${'p50'.padStart(9)} ${'p99'.padStart(9)}  ${'added p99'.padStart(9)}  p99 ratio`);
    for (const count of [...COUNTS, PER_HOOK]) {
      const f = figures(latencies.get(count)!, 1, 1);
      const label = count === 0 ? '0 (no webhook, baseline)' : count === PER_HOOK ? '100, one entry per hook' : `${count}, shared entries`;
      const added = count === 0 ? '' : ms(f.p99 - base.p99);
      console.log(`  ${label.padEnd(28)} ${String(entries.get(count) ?? 0).padStart(7)} ${ms(f.p50).padStart(9)} ${ms(f.p99).padStart(9)}  ${added.padStart(9)}  ${(f.p99 / base.p99).toFixed(2)}`);
    }
    console.log(`  (${machineLoad()} at the end)`);
  } finally {
    await close();
  }
}

/** The cluster hooks' configuration and the one tenant configuration (the gateway runs with --tenant-configurations=1), as one. */
async function configuration(client: KubeClient): Promise<V1ValidatingWebhookConfiguration | undefined> {
  const read = (name: string) => client.request<V1ValidatingWebhookConfiguration>({ path: `${CONFIGURATIONS}${name}` }).catch(() => undefined);
  const [cluster, tenants] = await Promise.all([read('kubeloop-admission-hooks'), read(tenantConfigurationName('kubeloop-admission-hooks', 0))]);
  return { webhooks: [...(cluster?.webhooks ?? []), ...(tenants?.webhooks ?? [])] };
}

interface Expected {
  /** Webhook entries registered. */
  entries?: number;
  /** Namespaces listed by the shared entries. */
  namespaces?: number;
  /** A namespace where an unlabelled dry-run pod is denied (the API server applies the newest hook)... */
  denies?: string;
  /** ...or admitted (it applies none). */
  admits?: string;
}

/** Until the gateway registered what is expected and the API server applies it. */
async function untilInEffect(client: KubeClient, expected: Expected): Promise<void> {
  const deadline = Date.now() + 120_000;
  const probe = async (namespace: string): Promise<boolean> => {
    try {
      await client.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/pods`, query: { dryRun: 'All' }, body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe' }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } });
      return false;
    } catch (error) {
      if (String(error).includes('"team" label')) return true;
      throw error;
    }
  };
  for (;;) {
    const webhooks = (await configuration(client))?.webhooks ?? [];
    const namespaces = webhooks.flatMap((webhook) => webhook.namespaceSelector?.matchExpressions?.find((e) => e.operator === 'In')?.values ?? []);
    const registered = (expected.entries === undefined || webhooks.length === expected.entries) && (expected.namespaces === undefined || namespaces.length === expected.namespaces);
    if (registered && (expected.denies ? await probe(expected.denies) : !(await probe(expected.admits ?? other(1))))) return;
    if (Date.now() > deadline) throw new Error(`hooks not in effect within 120 s: expected ${JSON.stringify(expected)}, registered ${webhooks.length} entries listing ${namespaces.length} namespaces`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
