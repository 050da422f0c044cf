// Compiled validators for both sides of the contract, with errors a person can read.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { ReconcileRequest, ReconcileResponse } from './types.ts';
import type { AdmissionRequest, AdmissionResponse } from './admission-types.ts';
import { reconcileRequestSchema, reconcileResponseSchema } from './schemas.ts';
import { admissionRequestSchema, admissionResponseSchema } from './admission-schemas.ts';

const ajv = new Ajv({ allErrors: true, discriminator: true, strict: false });
ajv.addFormat('date-time', (value: string) => !Number.isNaN(Date.parse(value)));

const requestValidator = ajv.compile(reconcileRequestSchema) as ValidateFunction<ReconcileRequest>;
const responseValidator = ajv.compile(reconcileResponseSchema) as ValidateFunction<ReconcileResponse>;
const admissionRequestValidator = ajv.compile(admissionRequestSchema) as ValidateFunction<AdmissionRequest>;
const admissionResponseValidator = ajv.compile(admissionResponseSchema) as ValidateFunction<AdmissionResponse>;

export type Validation<T> = { ok: true; value: T } | { ok: false; errors: string[] };

export function formatSchemaErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const where = e.instancePath === '' ? '(root)' : e.instancePath;
    const allowed = 'allowedValues' in e.params ? `: ${JSON.stringify(e.params.allowedValues)}` : '';
    const constant = 'allowedValue' in e.params ? `: ${JSON.stringify(e.params.allowedValue)}` : '';
    return `${where} ${e.message ?? 'is invalid'}${allowed}${constant}`;
  });
}

function validateWith<T>(validator: ValidateFunction<T>, value: unknown): Validation<T> {
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
