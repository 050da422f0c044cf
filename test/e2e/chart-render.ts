// Renders charts/kubeloop with the real helm binary and reads the manifests back, for the chart suites
// (test/e2e/chart*.test.ts) and the tenant suites' rendered roles and policies.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { VERSIONS } from '../../cli/cluster/versions.ts';

const run = promisify(execFile);

export const CHART_DIR = fileURLToPath(new URL('../../charts/kubeloop', import.meta.url));
/** helm template assumes Kubernetes 1.20 without it, and the chart requires >= 1.28. */
export const KUBE_VERSION = VERSIONS.kubernetes.replace(/^v/, '');

export type Manifest = KubernetesObject & Record<string, unknown> & { kind: string; metadata: { name: string; namespace?: string } };

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs helm; never throws on a non-zero exit so tests can assert on the message. */
export async function helm(binary: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<HelmResult> {
  try {
    const { stdout, stderr } = await run(binary, args, { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(error) };
  }
}

/** Writes values to a temp file and passes it with -f; returns the args and a cleanup. */
export async function valuesFile(values: Record<string, unknown>): Promise<{ args: string[]; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-values-'));
  const file = join(dir, 'values.yaml');
  await writeFile(file, stringify(values));
  return { args: ['-f', file], cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** `helm template` of the chart with these values, for tests of what the values schema refuses. */
export async function templateWithValues(binary: string, values: Record<string, unknown>): Promise<HelmResult> {
  const file = await valuesFile(values);
  try {
    return await helm(binary, ['template', 'kubeloop', CHART_DIR, '--kube-version', KUBE_VERSION, ...file.args]);
  } finally {
    await file.cleanup();
  }
}

export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors.map((e) => e.message).join('; ')}`);
      return doc.toJS() as Manifest | null;
    })
    .filter((m): m is Manifest => m !== null && typeof m === 'object');
}

export interface RenderOptions {
  release?: string;
  namespace: string;
  values?: Record<string, unknown>;
  /** Include the `helm test` hook pod. */
  withTests?: boolean;
  /** Include the CRDs Helm installs from crds/ folders (the crds subchart's), as `helm install` would. */
  includeCrds?: boolean;
}

/** `helm template` with the given values; throws with helm's message when rendering fails. */
export async function renderChart(helmBinary: string, options: RenderOptions): Promise<{ text: string; manifests: Manifest[] }> {
  const values = await valuesFile(options.values ?? {});
  try {
    const args = ['template', options.release ?? 'kubeloop', CHART_DIR, '--namespace', options.namespace, '--kube-version', KUBE_VERSION, ...values.args];
    if (!options.withTests) args.push('--skip-tests');
    if (options.includeCrds) args.push('--include-crds');
    const result = await helm(helmBinary, args);
    if (result.code !== 0) throw new Error(`helm template failed: ${result.stderr}`);
    return { text: result.stdout, manifests: parseManifests(result.stdout) };
  } finally {
    await values.cleanup();
  }
}

export function byKind(manifests: Manifest[], kind: string): Manifest[] {
  return manifests.filter((m) => m.kind === kind);
}

export function one(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) {
    const have = manifests.map((m) => `${m.kind}/${m.metadata.name}`).join(', ');
    throw new Error(`no ${kind}/${name} among the rendered manifests: ${have}`);
  }
  return found;
}
