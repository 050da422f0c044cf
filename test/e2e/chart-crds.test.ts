// The chart's CRDs by value: crds.install, seeds.enabled (Watcher kept while the webhook runs), crds.keep;
// each rendered CRD is the file kubeloop dev and the tests apply, plus Helm's labels and the keep policy.
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { chartCrdFiles } from '../../cli/chart-crds.ts';
import { byKind, renderChart, type Manifest } from './chart-render.ts';

const helmBinary = inject('clusterBinaries').helm;
const CORE = ['admissionhooks.kubeloop.dev', 'clusteradmissionhooks.kubeloop.dev', 'clusterloops.kubeloop.dev', 'loops.kubeloop.dev'];
const SEEDS = ['ats.cnat.kubeloop.dev', 'podsets.app.kubeloop.dev', 'watchers.watch.kubeloop.dev'];

async function renderedCrds(values: Record<string, unknown>): Promise<Manifest[]> {
  const { manifests } = await renderChart(helmBinary, { namespace: 'kubeloop-system', values, includeCrds: true });
  return byKind(manifests, 'CustomResourceDefinition');
}

const names = (crds: Manifest[]): string[] => crds.map((c) => c.metadata.name).sort();

describe('the chart CRDs', () => {
  it('installs all five by default, each equal to its file apart from metadata', async () => {
    const crds = await renderedCrds({});
    expect(names(crds)).toEqual([...CORE, ...SEEDS].sort());
    for (const file of chartCrdFiles()) {
      const source = parse(readFileSync(file, 'utf8')) as Manifest;
      const rendered = crds.find((c) => c.metadata.name === source.metadata.name);
      expect({ ...rendered, metadata: undefined }, file).toEqual({ ...source, metadata: undefined });
    }
  });

  it('marks the templated seed CRDs as part of the release, kept on uninstall (crds.keep)', async () => {
    for (const crd of (await renderedCrds({})).filter((c) => SEEDS.includes(c.metadata.name))) {
      const metadata = crd.metadata as { labels?: Record<string, string>; annotations?: Record<string, string> };
      expect(metadata.labels?.['app.kubernetes.io/managed-by']).toBe('Helm');
      expect(metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    }
    const unkept = (await renderedCrds({ crds: { install: true, keep: false } })).filter((c) => SEEDS.includes(c.metadata.name));
    expect(unkept).toHaveLength(SEEDS.length);
    for (const crd of unkept) expect((crd.metadata as { annotations?: Record<string, string> }).annotations).toBeUndefined();
  });

  it('installs none with crds.install=false', async () => {
    expect(await renderedCrds({ crds: { install: false, keep: true } })).toEqual([]);
  });

  it('leaves out the seed CRDs with seeds.enabled=false, but keeps Watcher while the webhook injects Watchers', async () => {
    expect(names(await renderedCrds({ seeds: { enabled: false } }))).toEqual([...CORE, 'watchers.watch.kubeloop.dev'].sort());
    expect(names(await renderedCrds({ seeds: { enabled: false }, webhook: { enabled: false } }))).toEqual(CORE);
  });
});
