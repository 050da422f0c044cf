// Validators for both sides of the contract (reconcile and admission), with errors a person can read. They
// are ajv standalone code precompiled from schemas.ts and admission-schemas.ts (`npm run schemas`), so
// validating needs no code generation at run time (Cloudflare Workers and others refuse `new Function`).
import type { ErrorObject } from 'ajv';
import type { ReconcileRequest, ReconcileResponse } from './types.ts';
import type { AdmissionRequest, AdmissionResponse } from './admission-types.ts';
import { validateAdmissionReq, validateAdmissionRes, validateRequest, validateResponse } from './validators.generated.ts';

/** The shape of an ajv-compiled validator: a type guard that leaves its errors on itself. */
interface CompiledValidator<T> {
  (value: unknown): value is T;
  errors?: ErrorObject[] | null;
}

const requestValidator = validateRequest as unknown as CompiledValidator<ReconcileRequest>;
const responseValidator = validateResponse as unknown as CompiledValidator<ReconcileResponse>;
const admissionRequestValidator = validateAdmissionReq as unknown as CompiledValidator<AdmissionRequest>;
const admissionResponseValidator = validateAdmissionRes as unknown as CompiledValidator<AdmissionResponse>;

export type Validation<T> = { ok: true; value: T } | { ok: false; errors: string[] };

export function formatSchemaErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const where = e.instancePath === '' ? '(root)' : e.instancePath;
    const allowed = 'allowedValues' in e.params ? `: ${JSON.stringify(e.params.allowedValues)}` : '';
    const constant = 'allowedValue' in e.params ? `: ${JSON.stringify(e.params.allowedValue)}` : '';
    return `${where} ${e.message ?? 'is invalid'}${allowed}${constant}`;
  });
}

function validateWith<T>(validator: CompiledValidator<T>, value: unknown): Validation<T> {
  if (validator(value)) return { ok: true, value };
  return { ok: false, errors: formatSchemaErrors(validator.errors) };
}

export const validateReconcileRequest = (value: unknown): Validation<ReconcileRequest> =>
  validateWith(requestValidator, value);

export const validateReconcileResponse = (value: unknown): Validation<ReconcileResponse> =>
  validateWith(responseValidator, value);

export const validateAdmissionRequest = (value: unknown): Validation<AdmissionRequest> =>
  validateWith(admissionRequestValidator, value);

export const validateAdmissionResponse = (value: unknown): Validation<AdmissionResponse> =>
  validateWith(admissionResponseValidator, value);
