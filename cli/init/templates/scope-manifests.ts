// The objects around a generated Loop or AdmissionHook, in either scope: for a namespace admin (the default)
// a ServiceAccount, Role and RoleBinding and the function's Deployment and Service, none with a namespace so
// `kubectl apply -n NS` puts them in the team's own; for a cluster admin (--cluster) the ServiceAccount in
// kubeloop-system with a ClusterRole and ClusterRoleBinding (the chart runs the function).
import { stringify } from 'yaml';
import type { ProjectOptions } from '../project-options.ts';

/** Where the cluster-scoped kinds' ServiceAccounts and functions live: the chart's namespace. */
export const CLUSTER_NAMESPACE = 'kubeloop-system';

/** The port every generated function serves on (kubeloop function, the Python and Go SDKs: PORT, default 8080). */
export const FUNCTION_PORT = 8080;

type Rule = Record<string, unknown>;

/**
 * A namespaced Loop's signing Secret: the router signs each call with its key and the function (function.yaml
 * reads it into KUBELOOP_SIGNING_SECRET) refuses unsigned ones. Not in the project (a key is no file to commit):
 * the README's deploy steps create it with kubectl, and `kubeloop dev` and kubeloop/testing/cluster when missing.
 */
export const SIGNING_SECRET_KEY = 'secret';
export const signingSecretName = (options: ProjectOptions): string => `${options.name}-signing`;

/** The Loop's ServiceAccount reads (and follows, for rotation) that one Secret: the router reads it as that account. */
export function signingSecretRule(options: ProjectOptions): Rule {
  return { apiGroups: [''], resources: ['secrets'], resourceNames: [signingSecretName(options)], verbs: ['get', 'list', 'watch'] };
}

/** `{ name }` in the team's namespace (omitted: the object's own), `{ namespace, name }` in kubeloop-system. */
export function accountRef(options: ProjectOptions, name: string): { name: string; namespace?: string } {
  return options.cluster ? { namespace: CLUSTER_NAMESPACE, name } : { name };
}

/**
 * A ServiceAccount with exactly `rules`: a Role and RoleBinding in its own namespace, or with --cluster a
 * ClusterRole and ClusterRoleBinding (a ClusterLoop may watch every namespace). A RoleBinding's ServiceAccount
 * subject without a namespace is one of the binding's own, so nothing here names the team's namespace.
 */
export function accountYaml(options: ProjectOptions, name: string, rules: Rule[]): string {
  const account = accountRef(options, name);
  const serviceAccount = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: account, automountServiceAccountToken: false };
  const roleKind = options.cluster ? 'ClusterRole' : 'Role';
  const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: roleKind, metadata: { name }, rules };
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: `${roleKind}Binding`,
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name },
    subjects: [{ kind: 'ServiceAccount', ...account }],
  };
  return `${stringify(serviceAccount)}---\n${stringify(role)}---\n${stringify(binding)}`;
}

/** The chart's release as the docs install it (helm upgrade --install kubeloop ... -n kubeloop-system). */
export const RELEASE = 'kubeloop';
/** The label by which the chart's router picks its release's Loops (router.onlyReleaseLoops, on by default). */
export const RELEASE_LABEL = 'app.kubernetes.io/instance';

/** The chart's router ServiceAccount with the release `kubeloop` in `kubeloop-system`. */
export const ROUTER_ACCOUNT = { namespace: CLUSTER_NAMESPACE, name: `${RELEASE}-router` };

/**
 * What the router itself needs in the team's namespace to run the Loop, granted there by the namespace admin
 * (the chart gives it no cluster-wide impersonation or reads): to act as the Loop's ServiceAccount, and to
 * read the kinds the Loop watches (its informers are shared between Loops, so it lists them as itself).
 */
export function routerGrantYaml(options: ProjectOptions, accountName: string, loopRules: Rule[]): string {
  const name = `${options.name}-kubeloop-router`;
  const reads = loopRules
    .filter((rule) => !(rule.resources as string[]).includes('events'))
    .map((rule) => ({ apiGroups: rule.apiGroups, resources: rule.resources, verbs: ['get', 'list', 'watch'] }));
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name },
    rules: [{ apiGroups: [''], resources: ['serviceaccounts'], resourceNames: [accountName], verbs: ['impersonate'] }, ...reads],
  };
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', ...ROUTER_ACCOUNT }],
  };
  return `# kubeloop's router, in this namespace only: acting as ${accountName} and reading what the Loop watches. The subject
# is the chart's router with the release kubeloop in kubeloop-system; change it if kubeloop is installed otherwise.
${stringify(role)}---
${stringify(binding)}`;
}

/** The label that selects the function's pods (its Service, and a hook's objectSelector that skips them). */
export const FUNCTION_LABEL = 'app.kubernetes.io/name';

/**
 * function.yaml of a namespaced project: the function's image as a Deployment and a Service in the team's
 * namespace, locked down as the chart runs functions (non-root, read-only root, no token, no capabilities).
 */
export function functionWorkloadYaml(options: ProjectOptions): string {
  const labels = { [FUNCTION_LABEL]: options.name };
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: options.name, labels },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'function',
              image: `ghcr.io/your-org/${options.name}:0.1.0`,
              env: [
                { name: 'PORT', value: String(FUNCTION_PORT) },
                // A reconcile function verifies the router's signature with its Loop's key (an admission function's hook is unsigned).
                ...(options.admission ? [] : [{ name: 'KUBELOOP_SIGNING_SECRET', valueFrom: { secretKeyRef: { name: signingSecretName(options), key: SIGNING_SECRET_KEY } } }]),
              ],
              ports: [{ name: 'http', containerPort: FUNCTION_PORT, protocol: 'TCP' }],
              livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 10 },
              readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 5 },
              resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
            },
          ],
        },
      },
    },
  };
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: options.name, labels },
    spec: { selector: labels, ports: [{ name: 'http', port: FUNCTION_PORT, targetPort: 'http', protocol: 'TCP' }] },
  };
  return `# ${options.name}'s function in your namespace: build and push the image (README.md), set it below, then
#   kubectl apply -n <your-namespace> -f function.yaml
# kubeloop's router and webhook gateway call the Service; the function itself needs no Kubernetes rights.
${stringify(deployment)}---
${stringify(service)}`;
}

/** What a namespace admin runs, from the image to a running Loop or hook (README "Deploy to your namespace"). */
export function namespaceDeploySteps(options: ProjectOptions, file: 'loop.yaml' | 'admission-hook.yaml'): string {
  // A CustomResourceDefinition is cluster-scoped: a namespace admin asks a cluster admin to install it once.
  const crd = options.crd && file === 'loop.yaml' ? '# crd.yaml is cluster-scoped: a cluster admin runs `kubectl apply -f crd.yaml` once\n' : '';
  // The Loop's signing key, made once in the namespace (never committed): whsec_ and 32 random bytes in base64.
  const secret = file === 'loop.yaml' ? `kubectl create secret generic ${signingSecretName(options)} -n <your-namespace> --from-literal=${SIGNING_SECRET_KEY}=whsec_$(openssl rand -base64 32)\n` : '';
  return `\`\`\`sh
${crd}docker build -t ghcr.io/your-org/${options.name}:0.1.0 . && docker push ghcr.io/your-org/${options.name}:0.1.0
# no Docker engine? npx kubeloop image build --output image.tar builds the same image (push it with skopeo copy oci-archive:image.tar docker://...)
# edit the image in function.yaml, then, with nothing but the admin role in your namespace:
${secret}kubectl apply -n <your-namespace> -f function.yaml
kubectl apply -n <your-namespace> -f ${file}
kubectl get ${file === 'loop.yaml' ? 'loops.kubeloop.dev' : 'admissionhooks.kubeloop.dev'} -n <your-namespace>   # Ready=True once kubeloop runs it
\`\`\`

Everything here stays in your namespace: the ${file === 'loop.yaml' ? 'Loop watches and writes only there, as its ServiceAccount' : 'hook is sent only requests for objects there'}
(kubeloop's docs/tenants.md). \`kubeloop init --cluster\` writes the cluster-wide kind instead, for a cluster admin.`;
}
