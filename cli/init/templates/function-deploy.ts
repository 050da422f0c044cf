// `kubeloop init` function project, the packaging half: package.json, tsconfig, Dockerfile, the Loop, a
// Helm values snippet for the kubeloop chart and a README with the few commands from here to a cluster.
import { stringify } from 'yaml';
import { pluralOf, splitApiVersion } from '../../../lib/kube/resource-paths.ts';
import { FUNCTION_NODE_FLAGS } from '../../node-flags.ts';
import type { ProjectOptions } from '../project-options.ts';
import { sampleObjectPath } from './function-code.ts';
import type { ProjectFile } from './project-file.ts';
import { accountRef, accountYaml, CLUSTER_NAMESPACE, FUNCTION_LABEL, FUNCTION_PORT, functionWorkloadYaml, namespaceDeploySteps, RELEASE, RELEASE_LABEL, routerGrantYaml, SIGNING_SECRET_KEY, signingSecretName, signingSecretRule } from './scope-manifests.ts';

/** Versions of the generated project's tools: the ones this kubeloop is built and tested with. */
export interface ToolVersions {
  typescript: string;
  tsx: string;
  typesNode: string;
  /** The npm registry's \`node\` package: npm scripts and npx run on it even where the machine's node is older. */
  node: string;
  /** kubeloop's own npm overrides with $references resolved: npm applies overrides only at the root. */
  overrides: Record<string, unknown>;
  /** kubeloop's engines, which the project inherits (the Node.js it runs on). */
  engines: Record<string, string>;
}

function packageJson(options: ProjectOptions, tools: ToolVersions): string {
  const pkg = {
    name: options.name,
    version: '0.1.0',
    private: true,
    type: 'module',
    ...(Object.keys(tools.engines).length > 0 ? { engines: tools.engines } : {}),
    scripts: {
      test: 'tsc --noEmit && node --import tsx --test test/*.test.ts',
      // test/cluster/: against the local control plane (kubeloop/testing/cluster), apart from the offline tests.
      ...(options.cluster || options.admission ? {} : { 'test:cluster': 'node --import tsx --test test/cluster/*.test.ts' }),
      start: 'kubeloop function ./src/index.ts',
      replay: 'kubeloop replay fixtures --function ./src/index.ts',
      build: 'tsc -p tsconfig.build.json',
    },
    dependencies: { kubeloop: options.kubeloopSpec },
    // node@24 as kubeloop itself carries it: \`npm install\` puts it in node_modules/.bin, first on PATH for
    // \`npm test\`, \`npm start\` and \`npx kubeloop\`, whatever \`node\` the machine has.
    devDependencies: { '@types/node': tools.typesNode, node: tools.node, tsx: tools.tsx, typescript: tools.typescript },
    ...(Object.keys(tools.overrides).length > 0 ? { overrides: tools.overrides } : {}),
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

export const TSCONFIG = `{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "lib": ["ES2023"],
    "types": ["node"],
    "strict": true,
    "noUncheckedIndexedAccess": true,
    "skipLibCheck": true,
    "allowImportingTsExtensions": true,
    "rewriteRelativeImportExtensions": true,
    "verbatimModuleSyntax": true,
    "noEmit": true
  },
  "include": ["src", "test"]
}
`;

const TSCONFIG_BUILD = `{
  "extends": "./tsconfig.json",
  "compilerOptions": { "noEmit": false, "rootDir": "src", "outDir": "dist" },
  "include": ["src"]
}
`;

const DOCKERFILE = `# syntax=docker/dockerfile:1
# The function's image: compiled JavaScript on distroless Node.js, non-root, served by \`kubeloop function\`.
#   docker build -t <registry>/<repository>:<tag> .
ARG NODE_MAJOR=24

FROM node:\${NODE_MAJOR}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM gcr.io/distroless/nodejs\${NODE_MAJOR}-debian12:nonroot
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
USER 65532:65532
EXPOSE 8080
# The chart appends --port and --drain-delay-seconds; PORT and KUBELOOP_LOG_LEVEL work too.
# Node flags before the script as kubeloop's own function images have them (NODE_OPTIONS refuses them).
ENTRYPOINT ${JSON.stringify(['/nodejs/bin/node', ...FUNCTION_NODE_FLAGS, 'node_modules/kubeloop/cli/bin.js', 'function', 'dist/index.js']).replaceAll('","', '", "')}
`;

function loopSpec(options: ProjectOptions): Record<string, unknown> {
  const related = options.related.map((r) => ({ name: r.name, apiVersion: r.ref.apiVersion, kind: r.ref.kind, nameFrom: { annotation: r.annotation } }));
  // Not the function's own objects (function.yaml labels them): a Loop on Deployments must not reconcile its
  // function's Deployment. NotIn keeps every object without the label.
  const ownWorkload = options.cluster ? {} : { selector: { matchExpressions: [{ key: FUNCTION_LABEL, operator: 'NotIn', values: [options.name] }] } };
  return {
    for: options.for,
    ...(options.owns.length > 0 ? { owns: options.owns } : {}),
    ...(related.length > 0 ? { related } : {}),
    ...ownWorkload,
    // The function answers from spec and metadata: a status write (a Deployment controller's, every rollout) calls it for nothing.
    ignoreStatusChanges: true,
  };
}

function apiGroupOf(apiVersion: string): string {
  return splitApiVersion(apiVersion).group;
}

/**
 * The rights the router needs as the Loop's ServiceAccount: its kind, what it owns, what it reads; for a
 * ClusterLoop also the kind's status and finalizers. A namespace admin may grant only what the built-in admin
 * role holds, which has no status or finalizers of other kinds (RBAC refuses the Role as an escalation).
 */
function loopRules(options: ProjectOptions): Array<Record<string, unknown>> {
  const primary = { apiGroups: [apiGroupOf(options.for.apiVersion)], plural: pluralOf(options.for.kind) };
  return [
    { apiGroups: primary.apiGroups, resources: [primary.plural], verbs: ['get', 'list', 'watch', 'patch', 'update'] },
    ...(options.cluster ? [{ apiGroups: primary.apiGroups, resources: [`${primary.plural}/status`, `${primary.plural}/finalizers`], verbs: ['get', 'patch', 'update'] }] : []),
    ...options.owns.map((ref) => ({ apiGroups: [apiGroupOf(ref.apiVersion)], resources: [pluralOf(ref.kind)], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] })),
    // Related kinds are only read: without list and watch the Loop is Forbidden and sent nothing.
    ...options.related.map((r) => ({ apiGroups: [apiGroupOf(r.ref.apiVersion)], resources: [pluralOf(r.ref.kind)], verbs: ['get', 'list', 'watch'] })),
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
  ];
}

/** `localRun` says how to run the Loop against a local process (the TypeScript project's `kubeloop dev` line). */
export function loopYaml(options: ProjectOptions, localRun = '`kubeloop dev --function ./src/index.ts --loop loop.yaml`\n# points the Loop at the local process'): string {
  const accountName = `${options.name}-loop`;
  // A Loop calls the function's Service in its own namespace (function.yaml); a ClusterLoop the chart's.
  const fn = options.cluster
    ? { url: `http://${options.name}.${CLUSTER_NAMESPACE}.svc:${FUNCTION_PORT}/reconcile`, timeoutSeconds: 5 }
    : { ref: { name: options.name, port: FUNCTION_PORT, path: '/reconcile' }, timeoutSeconds: 5, signingSecretRef: { name: signingSecretName(options), key: SIGNING_SECRET_KEY } };
  const loop = {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: options.cluster ? 'ClusterLoop' : 'Loop',
    // The chart's router runs only its release's Loops (router.onlyReleaseLoops, the default): the release kubeloop.
    metadata: { name: options.name, labels: { [RELEASE_LABEL]: RELEASE } },
    spec: { ...loopSpec(options), serviceAccount: accountRef(options, accountName), function: fn },
  };
  const scope = options.cluster
    ? 'A ClusterLoop (cluster admins: docs/tenants.md) may watch every namespace'
    : 'A Loop watches and writes only in its own namespace: kubectl apply -n <your-namespace> -f loop.yaml';
  const rules = loopRules(options);
  return `# The ${loop.kind} binds ${options.for.kind} to this function; the router reads and writes for it as the ServiceAccount
# below, which has exactly the rights the Loop needs. ${scope}.
# ${localRun}${options.cluster ? '; installed with the chart, values.yaml renders all of this instead' : ''}.
${stringify(loop)}---
${accountYaml(options, accountName, options.cluster ? rules : [...rules, signingSecretRule(options)])}${options.cluster ? '' : `---\n${routerGrantYaml(options, accountName, rules)}`}`;
}

export function valuesYaml(options: ProjectOptions): string {
  const values = {
    functions: {
      [options.name]: {
        image: { registry: 'ghcr.io/your-org', repository: options.name, tag: '0.1.0' },
        loop: loopSpec(options),
      },
    },
  };
  return `# Values for the kubeloop chart that add ${options.name} (a Deployment, a Service and its Loop):
#   helm upgrade --install kubeloop node_modules/kubeloop/charts/kubeloop -n kubeloop-system --create-namespace -f values.yaml
# Add \`seeds: { enabled: false }\` to install without the four example functions and their CRDs.
${stringify(values)}`;
}

function readme(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  return `# ${options.name}

A [kubeloop](https://github.com/kubeloop/kubeloop) reconcile function for \`${kind}\` (\`${apiVersion}\`)${options.owns.length > 0 ? `, owning ${options.owns.map((r) => `\`${r.kind}\``).join(', ')}` : ''}.
It is a pure \`(request) => response\` in \`src/index.ts\`: the kubeloop router watches, calls it over HTTP and
applies the actions it returns. It needs no Kubernetes client and no credentials.

| command | what it does |
| --- | --- |
| \`npm test\` | type-checks, runs \`test/\` (unit tests and the fixtures replayed over HTTP) |
| \`npm start\` | serves the function on http://localhost:8080 (\`kubeloop function ./src/index.ts\`) |
${options.cluster ? '' : `| \`npm run test:cluster\` | \`test/cluster/\` against a local control plane (kubeloop/testing/cluster): loop.yaml applied as a namespace admin, a real ${kind} reconciled (kubeloop's docs/writing-a-function.md, "Test it on a cluster") |\n`}| \`npm run replay\` | replays \`fixtures/*.json\`; \`npx kubeloop replay fixtures --function ./src/index.ts --update\` re-records them after a deliberate change |
| \`npx kubeloop render ${sampleObjectPath(options)} --function ./src/index.ts --loop loop.yaml\` | prints the actions for the sample ${kind} and the objects after them |
| \`npx kubeloop dev --function ./src/index.ts --loop loop.yaml\` | runs it on a local cluster with the router, reloading on save |

${deploySection(options, 'loop.yaml')}
`;
}

/**
 * README's "Deploy" section: a namespace admin's kubectl lines (the default), or with --cluster the chart
 * install that runs the function and renders its ClusterLoop or ClusterAdmissionHook (a cluster admin's).
 */
export function deploySection(options: ProjectOptions, file: 'loop.yaml' | 'admission-hook.yaml', chart = 'node_modules/kubeloop/charts/kubeloop'): string {
  if (!options.cluster) return `## Deploy to your namespace\n\n${namespaceDeploySteps(options, file)}`;
  const what = file === 'loop.yaml' ? 'ClusterLoop' : 'ClusterAdmissionHook';
  return `## Deploy (cluster admin)

\`\`\`sh
docker build -t ghcr.io/your-org/${options.name}:0.1.0 . && docker push ghcr.io/your-org/${options.name}:0.1.0
# edit values.yaml (image registry, repository, tag), then:
helm upgrade --install kubeloop ${chart} -n kubeloop-system --create-namespace -f values.yaml
\`\`\`

The chart runs the image as a Deployment and Service and renders the ${what} from \`values.yaml\`; the router's
RBAC follows it. \`${file}\` is the same ${what} for \`kubectl apply\`${file === 'loop.yaml' ? ' or `kubeloop dev`' : ''}.`;
}

/** function.yaml for a namespace admin's project; the chart's values.yaml for a cluster admin's (--cluster). */
export function scopeFiles(options: ProjectOptions, values = valuesYaml): ProjectFile[] {
  return options.cluster ? [{ path: 'values.yaml', content: values(options) }] : [{ path: 'function.yaml', content: functionWorkloadYaml(options) }];
}

const GITIGNORE = 'node_modules/\ndist/\n';
const DOCKERIGNORE = 'node_modules\ndist\ntest\nfixtures\n';

/** What every function project has, reconcile or admission: package.json, tsconfigs, Dockerfile, ignores. */
export function commonDeployFiles(options: ProjectOptions, tools: ToolVersions): ProjectFile[] {
  return [
    { path: 'package.json', content: packageJson(options, tools) },
    { path: 'tsconfig.json', content: TSCONFIG },
    { path: 'tsconfig.build.json', content: TSCONFIG_BUILD },
    { path: 'Dockerfile', content: DOCKERFILE },
    { path: '.gitignore', content: GITIGNORE },
    { path: '.dockerignore', content: DOCKERIGNORE },
  ];
}

export function functionDeployFiles(options: ProjectOptions, tools: ToolVersions): ProjectFile[] {
  return [
    ...commonDeployFiles(options, tools),
    { path: 'loop.yaml', content: loopYaml(options) },
    ...scopeFiles(options),
    { path: 'README.md', content: readme(options) },
  ];
}
