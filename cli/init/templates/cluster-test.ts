// `kubeloop init`'s cluster test (test/cluster/loop.test.ts) for a namespaced TypeScript reconcile project:
// kubeloop/testing/cluster starts the local control plane with the chart's CRDs, RBAC and policies, serves
// src/index.ts, applies loop.yaml unchanged as a namespace admin, and the test asserts on a real object.
import type { ProjectOptions } from '../project-options.ts';
import { SAMPLE_SPEC } from './crd-files.ts';
import { reconciledLabel } from './function-code.ts';
import type { ProjectFile } from './project-file.ts';

/** The workload kinds whose object needs a pod template to be valid. */
const WORKLOADS = new Set(['apps/v1/Deployment', 'apps/v1/StatefulSet', 'apps/v1/DaemonSet', 'apps/v1/ReplicaSet']);

/** A valid object of the project's kind for the API server (render's sample needs none of this). */
export function clusterSampleObject(options: ProjectOptions): Record<string, unknown> {
  const { apiVersion, kind } = options.for;
  const labels = { app: 'example' };
  const base = { apiVersion, kind, metadata: { name: 'example', labels } };
  if (options.crd) return { ...base, spec: SAMPLE_SPEC };
  if (!WORKLOADS.has(`${apiVersion}/${kind}`)) return base;
  const template = { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] } };
  return { ...base, spec: { selector: { matchLabels: labels }, template, ...(kind === 'StatefulSet' ? { serviceName: 'example' } : {}) } };
}

/** A JSON value as TypeScript on one line: { name: 'example', labels: { app: 'example' } } (the sample's strings hold no quotes). */
function tsLiteral(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(tsLiteral).join(', ')}]`;
  if (value !== null && typeof value === 'object') return `{ ${Object.entries(value).map(([key, v]) => `${key}: ${tsLiteral(v)}`).join(', ')} }`;
  return typeof value === 'string' ? `'${value}'` : String(value);
}

function clusterTest(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  const fields = Object.entries(clusterSampleObject(options)).map(([key, value]) => `    ${key}: ${tsLiteral(value)},`);
  const object = `{\n${fields.join('\n')}\n  }`;
  return `// A cluster test of ${options.name} (npm run test:cluster): the local control plane with kubeloop's CRDs, RBAC and
// admission policies as the chart installs them, src/index.ts served locally, loop.yaml applied unchanged by a
// user who holds only \`admin\` in the namespace, and the router reconciling a real ${kind}.
// The control plane's binaries are built once into ~/.cache/kubeloop (npx kubeloop cluster build); a plane left
// running by \`npx kubeloop cluster up --detach\` is reused with KUBELOOP_TEST_KUBECONFIG=<its kubeconfig>.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { startTestCluster, type TestCluster } from 'kubeloop/testing/cluster';
// The label the scaffold's src/index.ts sets, written here rather than imported: a function that replaces it
// (docs/writing-a-function.md's example) keeps \`npm test\` type-checking; change the assertion with the function.
const RECONCILED_LABEL = '${reconciledLabel(options)}';

// A namespace of this run's own: on a reused control plane the last run's objects are still there.
const namespace = \`team-\${randomBytes(3).toString('hex')}\`;
let cluster: TestCluster;

before(async () => {
  cluster = await startTestCluster({ onProgress: (line) => console.log(\`# \${line}\`) });
  await cluster.runFunction({ function: 'src/index.ts', loop: 'loop.yaml', namespace, asNamespaceAdmin: true });
  await cluster.waitForCondition({ apiVersion: 'kubeloop.dev/v1alpha1', kind: 'Loop', name: '${options.name}', namespace }, 'Ready');
});
after(async () => {
  await cluster?.stop();
});

test('labels a new ${kind} in the namespace, through the router', async () => {
  await cluster.apply(${object}, namespace);
  const labels = await cluster.waitFor('the ${kind} labelled', async () => {
    const live = await cluster.get<{ metadata: { labels?: Record<string, string> } }>({ apiVersion: '${apiVersion}', kind: '${kind}', name: 'example', namespace });
    return live?.metadata.labels?.[RECONCILED_LABEL] === 'true' && live.metadata.labels;
  });
  assert.equal(labels[RECONCILED_LABEL], 'true');
});
`;
}

/** The cluster test, for a namespaced TypeScript reconcile project (a ClusterLoop needs the chart's router: docs/writing-a-function.md). */
export function clusterTestFiles(options: ProjectOptions): ProjectFile[] {
  return options.cluster ? [] : [{ path: 'test/cluster/loop.test.ts', content: clusterTest(options) }];
}
