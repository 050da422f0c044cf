// `kubeloop init --admission` project, the packaging half: the AdmissionHook binding the function to the
// kind it admits, a Helm values snippet for the kubeloop chart and a README (package.json, tsconfig and
// Dockerfile are the reconcile project's).
import { stringify } from 'yaml';
import type { ProjectOptions } from '../project-options.ts';
import { pluralOf } from '../../../lib/kube/resource-paths.ts';
import { commonDeployFiles, deploySection, scopeFiles, type ToolVersions } from './function-deploy.ts';
import { accountRef, CLUSTER_NAMESPACE, FUNCTION_LABEL, FUNCTION_PORT, RELEASE } from './scope-manifests.ts';
import type { ProjectFile } from './project-file.ts';

/** The AdmissionHook spec without its function: what the chart's admissionHook value takes. */
export function admissionHookSpec(options: ProjectOptions): Record<string, unknown> {
  const { apiVersion, kind } = options.for;
  const group = apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
  const version = apiVersion.split('/').pop() ?? apiVersion;
  return {
    type: options.admission ?? 'validating',
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [group], apiVersions: [version], resources: [pluralOf(kind)] }],
    // A cluster-wide hook: only namespaces labelled for it (try it on one namespace first, widen the selector
    // later). A namespaced hook sees only its own namespace; it skips the function's own pods, which a hook
    // failing closed would otherwise keep from starting while its function is down.
    ...(options.cluster
      ? { namespaceSelector: { matchLabels: { [`${options.name}.example.com/enabled`]: 'true' } } }
      : { objectSelector: { matchExpressions: [{ key: FUNCTION_LABEL, operator: 'NotIn', values: [options.name] }] } }),
    failurePolicy: options.admission === 'mutating' ? 'Ignore' : 'Fail',
    // A namespaced hook waits at most 3 s (the gateway's --namespaced-hook-max-timeout-seconds default).
    timeoutSeconds: options.cluster ? 5 : 3,
    ...(options.admission === 'mutating' ? { reinvocationPolicy: 'IfNeeded' } : {}),
  };
}

/** admission-hook.yaml: the hook calling the function's Service, and (namespaced) its ServiceAccount. */
export function hookYaml(options: ProjectOptions): string {
  const service = { name: options.name, ...(options.cluster ? { namespace: CLUSTER_NAMESPACE } : {}), port: FUNCTION_PORT, path: '/admit' };
  const hook = {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: options.cluster ? 'ClusterAdmissionHook' : 'AdmissionHook',
    metadata: { name: options.name },
    spec: {
      ...admissionHookSpec(options),
      function: { service },
      // Who the hook acts as (context objects are read as it; creating the hook needs impersonate on it).
      serviceAccount: accountRef(options, options.name),
    },
  };
  const scope = options.cluster
    ? `It is sent only objects in namespaces labelled
# ${options.name}.example.com/enabled=true (kubectl label namespace <ns> ${options.name}.example.com/enabled=true).
# Installed with the chart, values.yaml renders the same hook instead (pointing at the chart's Service).`
    : `It is sent only requests for objects in its own
# namespace: kubectl apply -n <your-namespace> -f admission-hook.yaml (after function.yaml).
# A context entry (spec.context) is read from this namespace by the gateway, which needs your grant here: a Role
# with get, list and watch on that kind bound to ServiceAccount ${CLUSTER_NAMESPACE}/${RELEASE}-webhook (docs/tenants.md).`;
  // The hook's ServiceAccount: no rights until a context entry needs some (a Role for exactly those gets).
  const account = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: accountRef(options, options.name), automountServiceAccountToken: false };
  return `# The ${hook.kind} binds ${options.for.kind} admission to this function; kubeloop's webhook gateway registers
# it and calls the function at the Service below. ${scope}
${stringify(hook)}${options.cluster ? '' : `---\n${stringify(account)}${mutatingGrant(options)}`}`;
}

/**
 * A namespaced mutating hook changes what it admits, so its ServiceAccount (and its author) must be allowed to
 * update and patch that kind in the namespace: the gateway checks it before registering the hook.
 */
function mutatingGrant(options: ProjectOptions): string {
  if (options.admission !== 'mutating') return '';
  const { apiVersion, kind } = options.for;
  const group = apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
  const name = `${options.name}-hook-writes`;
  const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules: [{ apiGroups: [group], resources: [pluralOf(kind)], verbs: ['update', 'patch'] }] };
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name: options.name }],
  };
  return `---\n${stringify(role)}---\n${stringify(binding)}`;
}

/** values.yaml for --cluster: the chart renders the function and its hook. */
export function admissionValuesYaml(options: ProjectOptions): string {
  const values = {
    functions: {
      [options.name]: {
        image: { registry: 'ghcr.io/your-org', repository: options.name, tag: '0.1.0' },
        admissionHook: admissionHookSpec(options),
      },
    },
  };
  return `# Values for the kubeloop chart that add ${options.name} (a Deployment, a Service and its AdmissionHook):
#   helm upgrade --install kubeloop node_modules/kubeloop/charts/kubeloop -n kubeloop-system --create-namespace -f values.yaml
${stringify(values)}`;
}

function readme(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  return `# ${options.name}

A [kubeloop](https://github.com/kubeloop/kubeloop) ${options.admission} admission function for \`${kind}\` (\`${apiVersion}\`).
It is a pure \`(request) => response\` in \`src/index.ts\`: kubeloop's webhook gateway receives the API server's
AdmissionReview, sends the function a \`kubeloop.dev/v1\` AdmissionRequest (with any context objects the hook
names) and turns its answer back into the review. It needs no certificates, no Kubernetes client and no credentials.

| command | what it does |
| --- | --- |
| \`npm test\` | type-checks, runs \`test/\` (unit tests and the fixtures replayed over HTTP) |
| \`npm start\` | serves the function on http://localhost:8080 (\`POST /admit\`) |
| \`npm run replay\` | replays \`fixtures/*.json\`; \`npx kubeloop replay fixtures --function ./src/index.ts --update\` re-records them after a deliberate change |

Record real requests: run the gateway with \`kubeloop webhook --record fixtures/\` and create objects.

${deploySection(options, 'admission-hook.yaml')}

${options.cluster ? `Then label a namespace for it: \`kubectl label namespace <ns> ${options.name}.example.com/enabled=true\`.\n` : ''}How hooks, context objects and failure policies work: kubeloop's docs/admission.md.
`;
}

export function admissionDeployFiles(options: ProjectOptions, tools: ToolVersions): ProjectFile[] {
  return [
    ...commonDeployFiles(options, tools),
    { path: 'admission-hook.yaml', content: hookYaml(options) },
    ...scopeFiles(options, admissionValuesYaml),
    { path: 'README.md', content: readme(options) },
  ];
}
