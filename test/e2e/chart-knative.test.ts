// The chart's Knative variant: concurrency and autoscaling defaults, pod labels and annotations on the
// revision template, seldom resyncs for scale-to-zero functions (helm template); then a real helm install
// through Knative Serving's own admission webhook (test/e2e/knative-serving.ts), which defaults what the
// chart renders and rejects what Knative would not run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { ensureKnativeWebhook } from '../../cli/cluster/knative-webhook.ts';
import { byKind, CHART_DIR, helm, renderChart, valuesFile, type Manifest } from './chart-render.ts';
import { startKnativeServing, type KnativeServing } from './knative-serving.ts';

const helmBinary = inject('clusterBinaries').helm;
const KNATIVE = { functionDefaults: { runtime: 'knative' } };
/** The functions the chart runs by default (values.yaml), each a Knative Service in this variant. */
const DEFAULT_FUNCTIONS = Object.entries((parse(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as { functions: Record<string, { enabled?: boolean }> }).functions)
  .filter(([, fn]) => fn.enabled !== false)
  .map(([name]) => name)
  .sort();

interface KnativeService extends Manifest {
  spec: { template: { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: { containerConcurrency: number; timeoutSeconds?: number; containers: Array<{ name?: string }> } } };
}
interface Loop extends Manifest {
  spec: { resyncPeriodSeconds?: number };
}

const knativeServices = (manifests: Manifest[]) => manifests.filter((m) => m.apiVersion === 'serving.knative.dev/v1') as KnativeService[];
const progress = (line: string): void => void process.stderr.write(`[knative] ${line}\n`);

describe('helm template, Knative variant', () => {
  it('bounds each pod (containerConcurrency 16) and gives the autoscaler a target (8) and scale bounds', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace: 'kl', values: KNATIVE });
    const services = knativeServices(manifests);
    expect(services.map((service) => service.metadata.name).sort()).toEqual(DEFAULT_FUNCTIONS.map((name) => `kubeloop-${name}`));
    for (const service of services) {
      expect(service.spec.template.spec.containerConcurrency).toBe(16);
      expect(service.spec.template.metadata.annotations).toMatchObject({
        'autoscaling.knative.dev/target': '8',
        'autoscaling.knative.dev/min-scale': '0',
        'autoscaling.knative.dev/max-scale': '5',
      });
    }
  });

  it('passes podLabels and podAnnotations to the revision template, as to Deployments', async () => {
    const values = { ...KNATIVE, podLabels: { team: 'platform' }, podAnnotations: { 'example.com/owner': 'sre' } };
    const { manifests } = await renderChart(helmBinary, { namespace: 'kl', values });
    for (const service of knativeServices(manifests)) {
      expect(service.spec.template.metadata.labels.team).toBe('platform');
      expect(service.spec.template.metadata.annotations['example.com/owner']).toBe('sre');
    }
    const deployments = (await renderChart(helmBinary, { namespace: 'kl', values: { ...values, functionDefaults: { runtime: 'deployment' } } })).manifests;
    const fn = byKind(deployments, 'Deployment').find((d) => d.metadata.name.endsWith('-podset')) as unknown as { spec: { template: { metadata: { labels: Record<string, string> } } } };
    expect(fn.spec.template.metadata.labels.team).toBe('platform');
  });

  it('resyncs Loops of scale-to-zero functions every 6 h, unless minScale > 0 or the Loop sets its own period', async () => {
    const values = {
      ...KNATIVE,
      functions: { podset: { knative: { minScale: 1 } }, at: { loop: { resyncPeriodSeconds: 120 } } },
    };
    const loops = byKind((await renderChart(helmBinary, { namespace: 'kl', values })).manifests, 'ClusterLoop') as Loop[];
    const period = (fn: string) => loops.find((l) => l.metadata.name.endsWith(`-${fn}`))?.spec.resyncPeriodSeconds;
    expect(period('pod-name-label')).toBe(21_600);
    expect(period('watcher')).toBe(21_600);
    expect(period('podset')).toBeUndefined();
    expect(period('at')).toBe(120);
    const onDeployments = byKind((await renderChart(helmBinary, { namespace: 'kl' })).manifests, 'ClusterLoop') as Loop[];
    for (const loop of onDeployments) expect(loop.spec.resyncPeriodSeconds).toBeUndefined();
  });
});

describe("through Knative Serving's admission webhook", () => {
  let serving: KnativeServing;
  const namespace = 'kubeloop-knative';

  // A cold build of the webhook takes many minutes (cached under ~/.cache/kubeloop/knative-webhook after).
  beforeAll(async () => void (await ensureKnativeWebhook(progress)), 45 * 60_000);
  beforeAll(async () => {
    serving = await startKnativeServing(progress);
  });
  afterAll(async () => {
    await serving?.stop();
  });

  it('installs the Knative variant with helm: Knative admits every Service and fills in its defaults', async () => {
    const kube = ['--kubeconfig', serving.plane.kubeconfigPath];
    // Knative Services never become Ready here (no Knative controller): no --wait.
    const install = await helm(helmBinary, ['install', 'kl', CHART_DIR, ...kube, '--namespace', namespace, '--create-namespace', '--set', 'functionDefaults.runtime=knative']);
    expect(install.stderr).toBe('');
    expect(install.code).toBe(0);
    const listed = JSON.parse(await serving.kubectl(['-n', namespace, 'get', 'services.serving.knative.dev', '-o', 'json'])) as { items: KnativeService[] };
    expect(listed.items.map((s) => s.metadata.name).sort()).toEqual(DEFAULT_FUNCTIONS.map((name) => `kl-kubeloop-${name}`));
    for (const service of listed.items) {
      // Knative's defaulting webhook names the container and sets the request timeout; its own annotations
      // record who created the Service. None of these come from the chart.
      expect(service.spec.template.spec.containers[0]?.name).toBe('user-container');
      expect(service.spec.template.spec.timeoutSeconds).toBe(300);
      expect((service.metadata as { annotations?: Record<string, string> }).annotations?.['serving.knative.dev/creator']).toBeTruthy();
      expect(service.spec.template.spec.containerConcurrency).toBe(16);
    }
  });

  it('refuses, with Knative\'s message, values the chart schema lets through but Knative would not run (minScale > maxScale)', async () => {
    const kube = ['--kubeconfig', serving.plane.kubeconfigPath];
    const file = await valuesFile({ functionDefaults: { runtime: 'knative', knative: { minScale: 6, maxScale: 5 } } });
    try {
      const upgrade = await helm(helmBinary, ['upgrade', 'kl', CHART_DIR, ...kube, '--namespace', namespace, ...file.args]);
      expect(upgrade.code).not.toBe(0);
      expect(upgrade.stderr).toMatch(/admission webhook "validation\.webhook\.serving\.knative\.dev" denied the request/);
      expect(upgrade.stderr).toMatch(/max-scale=5 is less than min-scale=6/);
    } finally {
      await file.cleanup();
    }
    // Nothing was changed: the installed Services still carry the release's scale bounds.
    const minScales = await serving.kubectl(['-n', namespace, 'get', 'services.serving.knative.dev', '-o', "jsonpath={range .items[*]}{.spec.template.metadata.annotations['autoscaling\\.knative\\.dev/min-scale']} {end}"]);
    expect(minScales.trim()).toBe(DEFAULT_FUNCTIONS.map(() => '0').join(' '));
  });
});
