// Builds AdmissionRequests shaped as the webhook gateway sends them, for unit tests of admission functions
// and `kubeloop render` of one: the object, the operation, the stored object, dry run.
import type { AdmissionOperation, AdmissionRequest, AdmissionUserInfo } from '../contract/admission-types.ts';
import type { KubeObject } from '../contract/types.ts';
import { pluralOf, splitApiVersion } from '../kube/resource-paths.ts';

export interface AdmissionRequestParts {
  /** CREATE unless given. */
  operation?: AdmissionOperation;
  /** The stored object: UPDATE compares against it; DELETE has only it (the object given becomes it when absent). */
  oldObject?: KubeObject;
  dryRun?: boolean;
  hook?: string;
  userInfo?: AdmissionUserInfo;
  context?: Record<string, KubeObject | null>;
  /** The resource's plural when it is not the usual one (pluralOf). */
  resource?: string;
  subResource?: string;
  now?: string;
  uid?: string;
}

const OPTIONS_KIND: Record<AdmissionOperation, string | undefined> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions', CONNECT: undefined };

/**
 * The AdmissionRequest for `object` as the gateway sends it: on DELETE the object is the stored one
 * (`oldObject`) and there is no new object; on UPDATE `oldObject` defaults to the object itself.
 */
export function admissionRequestFor(object: KubeObject, parts: AdmissionRequestParts = {}): AdmissionRequest {
  const operation = parts.operation ?? 'CREATE';
  const { group, version } = splitApiVersion(object.apiVersion ?? 'v1');
  const kind = object.kind ?? '';
  const stored = operation === 'DELETE' || operation === 'UPDATE' ? (parts.oldObject ?? object) : parts.oldObject;
  const optionsKind = OPTIONS_KIND[operation];
  return {
    apiVersion: 'kubeloop.dev/v1',
    kind: 'AdmissionRequest',
    hook: parts.hook ?? 'test',
    uid: parts.uid ?? '00000000-0000-4000-8000-000000000000',
    operation,
    requestKind: { group, version, kind },
    resource: { group, version, resource: parts.resource ?? pluralOf(kind) },
    ...(parts.subResource ? { subResource: parts.subResource } : {}),
    ...(object.metadata?.name ? { name: object.metadata.name } : {}),
    ...(object.metadata?.namespace ? { namespace: object.metadata.namespace } : {}),
    ...(operation === 'DELETE' ? {} : { object }),
    ...(stored ? { oldObject: stored } : {}),
    userInfo: parts.userInfo ?? { username: 'jane@example.com', groups: ['system:authenticated'] },
    dryRun: parts.dryRun ?? false,
    ...(optionsKind ? { options: { apiVersion: 'meta.k8s.io/v1', kind: optionsKind } } : {}),
    context: parts.context ?? {},
    now: parts.now ?? '2026-11-22T10:00:00Z',
  };
}
