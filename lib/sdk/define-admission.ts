// defineAdmission: the one way to write an admission function, a pure (request) => response, served by
// the same runtime as reconcile functions (POST / or /admit).
import type { AdmissionRequest, AdmissionResponse } from '../contract/admission-types.ts';
import { assertFunctionName, shapeOf } from './define-function.ts';

export type Admit = (request: AdmissionRequest) => AdmissionResponse;

export interface AdmissionDefinition {
  /** Used in logs, metrics and the `kubeloop function <name>` command. */
  name: string;
  /** Which AdmissionHook type may call it: a validating function that answers a patch is refused by the runtime. */
  type: 'mutating' | 'validating';
  admit: Admit;
}

const ADMISSION_SHAPE = "defineAdmission takes { name, type, admit }: a DNS-label name, type 'validating' or 'mutating', and admit(request) => response";

export function defineAdmission(definition: AdmissionDefinition): AdmissionDefinition {
  const given = definition as Partial<AdmissionDefinition> | null | undefined;
  if (typeof given?.admit !== 'function') throw new Error(`${ADMISSION_SHAPE}; got ${shapeOf(given)}`);
  assertFunctionName(definition.name, ADMISSION_SHAPE);
  if (definition.type !== 'mutating' && definition.type !== 'validating') {
    throw new Error(`admission function "${definition.name}": type must be "mutating" or "validating"`);
  }
  return Object.freeze({ ...definition });
}

export function isAdmissionDefinition(definition: object): definition is AdmissionDefinition {
  return typeof (definition as { admit?: unknown }).admit === 'function';
}
