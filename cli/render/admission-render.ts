// `kubeloop render` for an admission function: the AdmissionRequest built from the object file and the flags
// (--operation, --old, --dry-run), and what the API server would make of the reply: the decision (allowed, or
// denied with its code, reason and message), the warnings, and the object after the function's patch.
import fastJsonPatch from 'fast-json-patch';
import { stringify } from 'yaml';
import type { AdmissionOperation, AdmissionRequest, AdmissionResponse } from '../../lib/contract/admission-types.ts';
import type { KubeObject } from '../../lib/contract/types.ts';
import { admissionRequestFor } from '../../lib/testing/admission-requests.ts';

const { applyPatch } = fastJsonPatch;

export const RENDERED_OPERATIONS: AdmissionOperation[] = ['CREATE', 'UPDATE', 'DELETE'];

export interface AdmissionRenderOptions {
  operation: AdmissionOperation;
  old?: KubeObject;
  dryRun: boolean;
  now: string;
}

/** The request the gateway would send: the file's object is the new one, or the deleted one on DELETE. */
export function buildAdmissionRenderRequest(object: KubeObject, options: AdmissionRenderOptions): AdmissionRequest {
  return admissionRequestFor(object, {
    operation: options.operation,
    ...(options.old ? { oldObject: options.old } : {}),
    dryRun: options.dryRun,
    hook: 'render',
    uid: 'kubeloop-render',
    now: options.now,
  });
}

export interface RenderedAdmission {
  /** "allowed", "allowed with a patch of N operation(s)" or "denied: 422 Invalid: <message>". */
  decision: string;
  /** The object as stored after the patch; absent when denied or on DELETE. */
  object?: KubeObject;
  /** A patch the API server would refuse. */
  problems: string[];
}

export function renderAdmission(request: AdmissionRequest, response: AdmissionResponse): RenderedAdmission {
  if (!response.allowed) {
    const status = response.status;
    return { decision: `denied: ${status?.code ?? 403} ${status?.reason ?? 'Forbidden'}: ${status?.message ?? ''}`, problems: [] };
  }
  const patch = response.patch ?? [];
  const decision = patch.length > 0 ? `allowed with a patch of ${patch.length} operation(s)` : 'allowed';
  if (!request.object) return { decision, problems: patch.length > 0 ? [`a ${request.operation} has no object to patch`] : [] };
  try {
    return { decision, object: applyPatch(structuredClone(request.object), patch, true, false).newDocument, problems: [] };
  } catch (error) {
    return { decision, problems: [`the patch does not apply to the object: ${(error as Error).message.split('\n')[0]}`] };
  }
}

/** YAML: comments with the decision and warnings, the AdmissionResponse, then the object after the patch. */
export function formatAdmission(request: AdmissionRequest, response: AdmissionResponse, rendered: RenderedAdmission, output: string): string {
  if (output === 'json') return JSON.stringify({ response, ...rendered }, null, 2);
  const comments = [
    `# ${request.operation}${request.dryRun ? ' (dry run)' : ''} of ${request.requestKind.kind} ${request.namespace ? `${request.namespace}/` : ''}${request.name ?? ''}: ${rendered.decision}`,
    ...(response.warnings ?? []).map((w) => `# warning: ${w}`),
    ...rendered.problems.map((p) => `# PROBLEM ${p}`),
    ...(rendered.object ? ['# the object after the patch follows'] : []),
  ];
  return [`${comments.join('\n')}\n${stringify(response)}`, ...(rendered.object ? [stringify(rendered.object)] : [])].join('---\n');
}
