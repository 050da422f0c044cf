// charts/kubeloop on the real control plane (kwok nodes): every manifest of every value set server-side dry-run
// applied (Knative Serving's and cert-manager's CRDs installed for those variants), a real helm install with the
// pods admitted under enforce=restricted, an upgrade keeping the signing keys, helm test, an uninstall that
// leaves nothing behind, and the seed CRDs adopted into a release and kept on uninstall.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { chartCrdFiles } from '../../cli/chart-crds.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { eventually } from '../cluster/eventually.ts';
import { certManagerCrdFiles, knativeServingCrdFiles } from './go-module-crds.ts';
import { CHART_DIR, helm, renderChart, valuesFile } from './chart-render.ts';
import { REPO_ROOT } from '../support/production-bundle.ts';
import { ADMISSION_FUNCTIONS, FUNCTIONS, VALUE_SETS } from './chart-fixtures.ts';
import { waitEstablished } from '../cluster/crds-established.ts';

const run = promisify(execFile);
const helmBinary = inject('clusterBinaries').helm;

describe('on the local control plane', () => {
  let workDir = '';
  let cluster: ClusterSuite;
  let kubectl = '';

  beforeAll(async () => {
    cluster = await setupClusterSuite('chart');
    kubectl = cluster.binaries.kubectl;
    workDir = await mkdtemp(join(tmpdir(), 'kubeloop-chart-'));
    const files = [...chartCrdFiles(REPO_ROOT), ...(await knativeServingCrdFiles()), ...(await certManagerCrdFiles())];
    await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'apply', '--server-side', '--force-conflicts', ...files.flatMap((f) => ['-f', f])]);
    await waitEstablished(cluster.kubeConfig, ['services.serving.knative.dev', 'certificates.cert-manager.io', 'issuers.cert-manager.io', 'clusterloops.kubeloop.dev']);
    // Pod Security admission warns about any workload that would not run under "restricted".
    await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'label', 'namespace', cluster.namespace, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/warn=restricted', '--overwrite']);
  });

  afterAll(async () => {
    if (workDir) await rm(workDir, { recursive: true, force: true });
    await cluster?.cleanup();
  });

  it.each(Object.entries(VALUE_SETS))('accepts every manifest rendered with the %s values (server-side dry run)', async (name, values) => {
    const { manifests } = await renderChart(helmBinary, { namespace: cluster.namespace, values, withTests: true });
    const file = join(workDir, `${name.replace(/\W+/g, '-')}.yaml`);
    await writeFile(file, manifests.map((m) => stringify(m)).join('---\n'));
    const { stdout, stderr } = await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'apply', '--dry-run=server', '--validate=strict', '--server-side', '--field-manager=helm', '-f', file]);
    expect(stderr).not.toMatch(/Warning/);
    expect(stdout.trim().split('\n')).toHaveLength(manifests.length);
  });

  it('installs with helm (pods admitted under enforce=restricted), runs the helm test hook, and helm uninstall leaves nothing behind', async () => {
    const release = `kl-${cluster.namespace.slice(-4)}`;
    const kube = ['--kubeconfig', cluster.kubeconfigPath];
    // Keep the shared control plane quiet for other suites: Loops and the webhook only see this namespace.
    const values = {
      webhook: { onlyNamespaces: [cluster.namespace], onlyReleaseHooks: true },
      functions: Object.fromEntries(FUNCTIONS.map((fn) => [fn, { loop: { namespaces: [cluster.namespace] } }])),
      // Other suites create Loops on this control plane meanwhile: the policy, like the router, takes this release's only.
      // The suites share the control plane and applied the CRDs without Helm's ownership metadata (see the
      // adoption test below).
      crds: { install: false, keep: true },
    };
    const file = await valuesFile(values);
    try {
      const install = await helm(helmBinary, ['install', release, CHART_DIR, ...kube, '--namespace', cluster.namespace, '--wait', '--timeout', '3m', ...file.args]);
      expect(install.stderr).toBe('');
      expect(install.code).toBe(0);
      expect(install.stdout).toMatch(/helm test/);
      // The certs commands as this release needs them (its names are not the CLI's defaults).
      expect(install.stdout).toContain(`kubeloop certs show --namespace ${cluster.namespace} --service ${release}-kubeloop-webhook --secret ${release}-kubeloop-webhook-tls --configuration ${release}-kubeloop-admission-hooks`);
      const selector = `app.kubernetes.io/instance=${release}`;
      const listed = async (kinds: string, namespaced: boolean): Promise<string[]> => {
        const args = [...kube, 'get', kinds, '-l', selector, '-o', 'name', ...(namespaced ? ['-n', cluster.namespace] : [])];
        const { stdout } = await run(kubectl, args);
        return stdout.split('\n').filter(Boolean).sort();
      };
      const namespacedKinds = 'deployments,replicasets,pods,services,serviceaccounts,roles,rolebindings,networkpolicies,poddisruptionbudgets,secrets,configmaps';
      const clusterKinds = 'clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingadmissionpolicies,validatingadmissionpolicybindings,clusterloops.kubeloop.dev,clusteradmissionhooks.kubeloop.dev';
      // ClusterRoles: the router's Loop reader, per Loop its ServiceAccount's and the router's read-only one, the
      // webhook's, per AdmissionHook its ServiceAccount's context reader, the three aggregated tenant roles
      // (admin, edit, view); cluster bindings: router, webhook and each
      // hook's (Loops limited to namespaces are bound by RoleBindings there); one webhook configuration; the Loop
      // and AdmissionHook admission policies and their bindings; the Loops.
      const clusterScoped = await listed(clusterKinds, false);
      expect(clusterScoped.filter((n) => n.startsWith('clusterrole.'))).toHaveLength(2 + 3 + 2 * FUNCTIONS.length + ADMISSION_FUNCTIONS.length);
      expect(clusterScoped.filter((n) => n.startsWith('validatingadmissionpolic'))).toHaveLength(4);
      expect(clusterScoped.filter((n) => n.startsWith('clusterrolebinding.'))).toHaveLength(2 + ADMISSION_FUNCTIONS.length);
      // The AdmissionHook gateway's configuration (the Watcher sidecar is one of its hooks) and that hook.
      expect(clusterScoped.filter((n) => n.startsWith('mutatingwebhookconfiguration.'))).toHaveLength(1);
      expect(clusterScoped.filter((n) => n.startsWith('clusteradmissionhook.'))).toHaveLength(ADMISSION_FUNCTIONS.length);
      expect(clusterScoped.filter((n) => n.startsWith('clusterloop.'))).toHaveLength(FUNCTIONS.length);
      const ready = await eventually('router and webhook Deployments available', async () => {
        const { stdout } = await run(kubectl, [...kube, '-n', cluster.namespace, 'get', 'deployments', '-l', selector, '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.availableReplicas}{"\\n"}{end}']);
        const lines = stdout.split('\n').filter(Boolean);
        // Each Deployment available, the router with both its replicas: one may turn available after the others.
        const all = lines.length === 2 + FUNCTIONS.length + ADMISSION_FUNCTIONS.length && lines.every((l) => !l.endsWith('='));
        return all && lines.includes(`${release}-kubeloop-router=2`) ? lines : undefined;
      }, 60_000);
      expect(ready).toContain(`${release}-kubeloop-router=2`);
      // An upgrade keeps each function's signing key (lookup), so the router and the function still agree.
      const signingKey = async () => (await run(kubectl, [...kube, '-n', cluster.namespace, 'get', 'secret', `${release}-kubeloop-podset-signing`, '-o', 'jsonpath={.data.secret}'])).stdout;
      const before = await signingKey();
      expect(Buffer.from(before, 'base64').toString('utf8')).toMatch(/^whsec_/);
      const upgrade = await helm(helmBinary, ['upgrade', release, CHART_DIR, ...kube, '--namespace', cluster.namespace, '--wait', '--timeout', '3m', ...file.args]);
      expect(upgrade.code).toBe(0);
      expect(await signingKey()).toBe(before);
      // kwok only simulates containers, so this proves the hook's shape (admitted under enforce=restricted,
      // run and reported by helm), not that the check inside it passes; images.test.ts covers the servers.
      const test = await helm(helmBinary, ['test', release, ...kube, '--namespace', cluster.namespace, '--timeout', '2m']);
      expect(test.stderr + test.stdout).toMatch(/TEST SUITE:\s+\S+-test-readiness[\s\S]*Phase:\s+Succeeded/);

      const uninstall = await helm(helmBinary, ['uninstall', release, ...kube, '--namespace', cluster.namespace, '--wait', '--timeout', '2m']);
      expect(uninstall.code).toBe(0);
      expect(await listed(clusterKinds, false)).toEqual([]);
      await eventually('no object of the release left in its namespace', async () => (await listed(namespacedKinds, true)).length === 0, 60_000);
      const { stdout: releases } = await run(kubectl, [...kube, '-n', cluster.namespace, 'get', 'secrets', '-l', `owner=helm,name=${release}`, '-o', 'name']);
      expect(releases.trim()).toBe('');
    } finally {
      await file.cleanup();
    }
  });

  it('adopts seed CRDs applied before they were templates (docs/deploy.md), then keeps them on uninstall', async () => {
    const release = `kc-${cluster.namespace.slice(-4)}`;
    const kube = ['--kubeconfig', cluster.kubeconfigPath, '--namespace', cluster.namespace];
    // No workload needed: the release's CRDs are what this is about.
    const values = {
      router: { replicas: 1, leaderElection: { enabled: false } },
      webhook: { enabled: false },
      networkPolicy: { enabled: false },
      functions: Object.fromEntries(FUNCTIONS.map((fn) => [fn, { enabled: false }])),
      crds: { install: false, keep: true },
    };
    const file = await valuesFile(values);
    const adopting = await valuesFile({ ...values, crds: { install: true, keep: true } });
    const seedCrds = ['ats.cnat.kubeloop.dev', 'podsets.app.kubeloop.dev', 'watchers.watch.kubeloop.dev'].map((n) => `crd/${n}`);
    const crdPolicy = async () => (await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'get', ...seedCrds, '-o', "jsonpath={range .items[*]}{.metadata.annotations['helm\\.sh/resource-policy']} {end}"])).stdout.trim();
    try {
      expect((await helm(helmBinary, ['install', release, CHART_DIR, ...kube, ...file.args])).code).toBe(0);
      // The CRDs exist (applied in beforeAll, as the former crds/ folder did) but belong to no release.
      const refused = await helm(helmBinary, ['upgrade', release, CHART_DIR, ...kube, ...adopting.args]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/exists and cannot be imported into the current release: invalid ownership metadata/);
      await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'label', '--overwrite', ...seedCrds, 'app.kubernetes.io/managed-by=Helm']);
      await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'annotate', '--overwrite', ...seedCrds, `meta.helm.sh/release-name=${release}`, `meta.helm.sh/release-namespace=${cluster.namespace}`]);
      const upgrade = await helm(helmBinary, ['upgrade', release, CHART_DIR, ...kube, ...adopting.args]);
      expect(upgrade.stderr).toBe('');
      expect(upgrade.code).toBe(0);
      expect(await crdPolicy()).toBe('keep keep keep');
      // crds.keep: the CRDs, and with them every PodSet, At and Watcher in the cluster, outlive the release.
      const uninstall = await helm(helmBinary, ['uninstall', release, ...kube]);
      expect(uninstall.code).toBe(0);
      expect(uninstall.stdout + uninstall.stderr).toMatch(/kept due to the resource policy/);
      expect(await crdPolicy()).toBe('keep keep keep');
    } finally {
      await file.cleanup();
      await adopting.cleanup();
    }
  });
});
