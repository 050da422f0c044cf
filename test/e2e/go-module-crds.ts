// CRDs of Knative Serving, cert-manager and the Prometheus Operator, from their Go modules in the Go module cache (outside the repo),
// so the chart's Knative Service, Certificate, Issuer and monitoring manifests can be applied to
// the local API server.
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Pinned: the newest releases the Go module proxy served when the chart was written. */
export const KNATIVE_SERVING_VERSION = 'v0.51.0';
export const CERT_MANAGER_VERSION = 'v1.21.2';

export async function moduleDir(module: string, version: string): Promise<string> {
  const { stdout } = await run('go', ['mod', 'download', '-json', `${module}@${version}`], {
    // Outside any module: a plain download into GOMODCACHE.
    cwd: '/',
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  const { Dir, Error: failure } = JSON.parse(stdout) as { Dir?: string; Error?: string };
  if (!Dir) throw new Error(`go mod download ${module}@${version} failed: ${failure ?? stdout}`);
  return Dir;
}

async function yamlFiles(dir: string, keep: (file: string) => boolean = () => true): Promise<string[]> {
  return (await readdir(dir))
    .filter((f) => f.endsWith('.yaml') && keep(f))
    .sort()
    .map((f) => join(dir, f));
}

/** services.serving.knative.dev and the other Serving CRDs (config/core/300-resources/). */
export async function knativeServingCrdFiles(): Promise<string[]> {
  return yamlFiles(join(await moduleDir('knative.dev/serving', KNATIVE_SERVING_VERSION), 'config', 'core', '300-resources'));
}

/** certificates.cert-manager.io and issuers.cert-manager.io (deploy/crds/). */
export async function certManagerCrdFiles(): Promise<string[]> {
  const dir = join(await moduleDir('github.com/cert-manager/cert-manager', CERT_MANAGER_VERSION), 'deploy', 'crds');
  return yamlFiles(dir, (f) => f === 'cert-manager.io_certificates.yaml' || f === 'cert-manager.io_issuers.yaml');
}

/** Pinned like the others: the Prometheus Operator's release the Go module proxy served when the chart's monitors were written. */
export const PROMETHEUS_OPERATOR_VERSION = 'v0.85.0';

/** servicemonitors, podmonitors and prometheusrules.monitoring.coreos.com (example/prometheus-operator-crd/). */
export async function prometheusOperatorCrdFiles(): Promise<string[]> {
  const dir = join(await moduleDir('github.com/prometheus-operator/prometheus-operator', PROMETHEUS_OPERATOR_VERSION), 'example', 'prometheus-operator-crd');
  const wanted = ['servicemonitors', 'podmonitors', 'prometheusrules'].map((plural) => `monitoring.coreos.com_${plural}.yaml`);
  return yamlFiles(dir, (f) => wanted.includes(f));
}
