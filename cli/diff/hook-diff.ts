// `kubeloop diff --hook`: recorded admission requests through the hook's current function and the new
// one, reporting the requests whose decision, denial, warnings or patch effect changed.
import type { AdmissionHook } from '../../api/admission-hook.ts';
import type { AdmissionResponse } from '../../lib/contract/admission-types.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import type { Difference } from '../../lib/replay/json-diff.ts';
import { callFunction } from '../../lib/replay/replay-client.ts';
import { identityOf, kindName, kubectlGet, scopedPath, type ScopedName } from '../scoped-names.ts';
import { DEV_HOOK_POLICY, resolveHook, type ResolvedHook } from '../../webhooks/index.ts';
import { admissionSubject, compareAdmission, decisionOf, type RecordedAdmission } from './admission-diff.ts';
import { DiffError } from './loop-state.ts';
import { mapBounded } from './map-bounded.ts';
import type { DiffOutcome } from './object-diff.ts';

export interface AdmissionReport {
  file: string;
  /** "CREATE Pod shop/web-*". */
  request: string;
  outcome: DiffOutcome;
  baseline?: string;
  candidate?: string;
  differences?: Difference[];
  error?: string;
}

/** Reads the AdmissionHook (-n) or ClusterAdmissionHook with the caller's own credentials. */
export async function readHook(admin: KubeClient, ref: ScopedName): Promise<ResolvedHook> {
  const name = `${kindName(ref)} ${identityOf(ref)}`;
  let hook: AdmissionHook | undefined;
  try {
    hook = await admin.getIfExists<AdmissionHook>({ path: scopedPath(ref) });
  } catch (error) {
    if (isApiError(error)) throw new DiffError(`cannot read ${name}: ${error.message}`);
    throw error;
  }
  if (!hook) throw new DiffError(`${name} not found (${kubectlGet(ref)})`);
  // As for Loops (loop-state.ts): diff runs beside the user, who may point a hook at a function on loopback;
  // the gateway's own policy still decides what the cluster may call.
  const resolved = resolveHook(hook, DEV_HOOK_POLICY);
  if (!resolved.ok) throw new DiffError(`${name}: ${resolved.message}`);
  return resolved.hook;
}

export async function diffHook(
  recorded: readonly RecordedAdmission[],
  options: { baselineUrl: string; candidateUrl: string; timeoutMs: number; concurrency: number; onProgress?: (done: number, total: number) => void },
): Promise<AdmissionReport[]> {
  const one = async (entry: RecordedAdmission): Promise<AdmissionReport> => {
    if (!entry.ok) return { file: entry.file, request: entry.file, outcome: 'error', error: entry.error };
    const request = admissionSubject(entry.request, entry.file);
    const [baseline, candidate] = await Promise.all([
      callFunction(entry.request, { url: options.baselineUrl, timeoutMs: options.timeoutMs }),
      callFunction(entry.request, { url: options.candidateUrl, timeoutMs: options.timeoutMs }),
    ]);
    if (!baseline.ok) return { file: entry.file, request, outcome: 'error', error: `the current version (${options.baselineUrl}): ${baseline.message}` };
    if (!candidate.ok) return { file: entry.file, request, outcome: 'error', error: `the new version: ${candidate.message}` };
    const was = baseline.response as AdmissionResponse;
    const now = candidate.response as AdmissionResponse;
    const differences = compareAdmission(entry.request, was, now);
    if (differences.length === 0) return { file: entry.file, request, outcome: 'unchanged' };
    return { file: entry.file, request, outcome: 'changed', baseline: decisionOf(was), candidate: decisionOf(now), differences };
  };
  return mapBounded(recorded, options.concurrency, one, options.onProgress);
}
