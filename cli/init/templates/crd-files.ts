// `kubeloop init --crd <group>/<version>/<Kind>`: your own kind beside the function, as kubebuilder's `create
// api` writes it: the CustomResourceDefinition (a structural OpenAPI schema with spec and status, the status
// subresource), its TypeScript type, and the sample object's spec. The Loop's RBAC uses the same plural.
import { stringify } from 'yaml';
import { pluralOf, splitApiVersion } from '../../../lib/kube/resource-paths.ts';
import type { ProjectOptions } from '../project-options.ts';
import type { ProjectFile } from './project-file.ts';

/** The spec of the sample object and of the recorded fixture's object. */
export const SAMPLE_SPEC = { replicas: 1, message: 'hello' };

/** src/<kind>.ts: where the function imports its kind's type from. */
export function typeModulePath(options: ProjectOptions): string {
  return `src/${options.for.kind.toLowerCase()}.ts`;
}

const CONDITION = {
  type: 'object',
  required: ['type', 'status'],
  properties: {
    type: { type: 'string' },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    reason: { type: 'string' },
    message: { type: 'string' },
    observedGeneration: { type: 'integer', format: 'int64' },
    lastTransitionTime: { type: 'string', format: 'date-time' },
  },
};

export function crdManifest(options: ProjectOptions): Record<string, unknown> {
  const { kind } = options.for;
  const { group, version } = splitApiVersion(options.for.apiVersion);
  const plural = pluralOf(kind);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      scope: 'Namespaced',
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          // Status is written through its subresource (the function's `status` action), never with spec.
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: `${kind} is reconciled by the kubeloop function ${options.name}.`,
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: {
                  type: 'object',
                  description: `What the ${kind} should be: edit to your needs, then the type in ${typeModulePath(options)}.`,
                  properties: {
                    replicas: { type: 'integer', format: 'int32', minimum: 0, default: 1 },
                    message: { type: 'string', maxLength: 256 },
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    observedGeneration: { type: 'integer', format: 'int64' },
                    conditions: { type: 'array', items: CONDITION, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/**
 * For a namespaced project: the built-in admin and edit roles get the kind (and its status) in their
 * namespaces, so a namespace admin may use it and grant it to the Loop's ServiceAccount (RBAC lets them grant
 * only what they hold). The cluster admin who installs the CRD installs this with it.
 */
function tenantRole(options: ProjectOptions): Record<string, unknown> {
  const crd = crdManifest(options) as { metadata: { name: string }; spec: { group: string; names: { plural: string } } };
  const { group, names } = crd.spec;
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: `${crd.metadata.name}-tenant`, labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true', 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } },
    rules: [{ apiGroups: [group], resources: [names.plural, `${names.plural}/status`], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] }],
  };
}

function crdYaml(options: ProjectOptions): string {
  return `# The ${options.for.kind} kind: \`kubectl apply -f crd.yaml\` (\`kubeloop dev --function\` applies it for you, from the
# folder of its --loop file). The schema is structural: every field the API server keeps is declared.${options.cluster ? '' : `
# Cluster-scoped, so a cluster admin applies it once; with it, a ClusterRole that adds the kind to every
# namespace's admin and edit roles, so that a namespace admin may use it and grant it to the Loop.`}
${stringify(crdManifest(options))}${options.cluster ? '' : `---\n${stringify(tenantRole(options))}`}`;
}

function typeModule(options: ProjectOptions): string {
  const { kind } = options.for;
  return `// ${kind} (${options.for.apiVersion}): the TypeScript type of the kind in crd.yaml; keep the two in step.
import type { KubeObject } from 'kubeloop';

export interface ${kind}Spec {
  replicas?: number;
  message?: string;
}

export interface ${kind}Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export interface ${kind}Status {
  observedGeneration?: number;
  conditions?: ${kind}Condition[];
}

export type ${kind} = KubeObject & { spec?: ${kind}Spec; status?: ${kind}Status };
`;
}

export function crdFiles(options: ProjectOptions): ProjectFile[] {
  return [
    { path: 'crd.yaml', content: crdYaml(options) },
    { path: typeModulePath(options), content: typeModule(options) },
  ];
}
