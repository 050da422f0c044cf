// Recorded events: test/fixtures/<function>/<case>.json = { description, request, response }
// (docs/contract.md, "Recorded events"; docs/admission.md for admission requests). Loading checks both
// halves against the contract; request.kind says which side (ReconcileRequest or AdmissionRequest).
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { AdmissionRequest, AdmissionResponse } from '../contract/admission-types.ts';
import type { ReconcileRequest, ReconcileResponse } from '../contract/types.ts';
import { validateAdmissionRequest, validateAdmissionResponse, validateReconcileRequest, validateReconcileResponse, type Validation } from '../contract/validate.ts';

export interface ReconcileFixture {
  /** What the case shows, in one sentence. */
  description: string;
  request: ReconcileRequest;
  response: ReconcileResponse;
}

export interface AdmissionFixture {
  description: string;
  request: AdmissionRequest;
  response: AdmissionResponse;
}

export type Fixture = ReconcileFixture | AdmissionFixture;

export function isAdmissionFixture(fixture: Fixture): fixture is AdmissionFixture {
  return fixture.request.kind === 'AdmissionRequest';
}

/** The reply validator for the side of the contract a recorded request belongs to. */
export function responseValidatorFor(request: { kind?: unknown }): (value: unknown) => Validation<ReconcileResponse | AdmissionResponse> {
  return request.kind === 'AdmissionRequest' ? validateAdmissionResponse : validateReconcileResponse;
}

/** A fixture written by hand with its request only: `kubeloop replay --update` records the response. */
export interface UnrecordedFixture {
  description: string;
  request: ReconcileRequest | AdmissionRequest;
}

/** Why a fixture cannot be replayed; `unrecorded` when the only thing missing is the response. */
export type FixtureProblem = { ok: false; error: string; unrecorded?: UnrecordedFixture };

export type LoadedFixture = { file: string; name: string } & ({ ok: true; fixture: Fixture } | FixtureProblem);

export function parseFixture(text: string): { ok: true; fixture: Fixture } | FixtureProblem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `not valid JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null) return { ok: false, error: 'want an object { description, request, response }' };
  const { description, request, response } = value as Record<string, unknown>;
  if (typeof description !== 'string' || description.trim() === '') return { ok: false, error: '"description" is missing' };
  const admission = (request as { kind?: unknown } | null)?.kind === 'AdmissionRequest';
  const checkedRequest = admission ? validateAdmissionRequest(request) : validateReconcileRequest(request);
  if (!checkedRequest.ok) return { ok: false, error: `recorded request is invalid: ${checkedRequest.errors.join('; ')}` };
  if (response === undefined) {
    return { ok: false, error: 'no recorded "response" yet: `kubeloop replay --update` records the reply', unrecorded: { description, request: checkedRequest.value } };
  }
  const checkedResponse = responseValidatorFor(checkedRequest.value)(response);
  if (!checkedResponse.ok) return { ok: false, error: `recorded response is invalid: ${checkedResponse.errors.join('; ')}` };
  return { ok: true, fixture: { description, request: checkedRequest.value, response: checkedResponse.value } as Fixture };
}

/** The file given, or every *.json directly inside the folder given (sorted). */
export function jsonFilesIn(fileOrFolder: string): string[] {
  if (!statSync(fileOrFolder).isDirectory()) return [fileOrFolder];
  return readdirSync(fileOrFolder)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => join(fileOrFolder, f));
}

/** A file, or every *.json directly inside a folder (sorted); unreadable or invalid files come back as errors. */
export function loadFixtures(fileOrFolder: string): LoadedFixture[] {
  return jsonFilesIn(fileOrFolder).map((file) => {
    const name = basename(file, '.json');
    try {
      return { file, name, ...parseFixture(readFileSync(file, 'utf8')) };
    } catch (error) {
      return { file, name, ok: false as const, error: (error as Error).message };
    }
  });
}

/**
 * Writes one fixture as <dir>/<file-safe name>.json (the router's and the gateway's --record); returns the
 * path. Recorded objects may hold Secrets' data and pod environments: readable by the owner only.
 */
export function writeFixture(dir: string, name: string, fixture: Fixture): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${name.replace(/[^a-zA-Z0-9.-]/g, '_')}.json`);
  writeFileSync(file, `${JSON.stringify(fixture, null, 2)}\n`, { mode: 0o600 });
  return file;
}
