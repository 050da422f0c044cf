// The At custom resource (ats.cnat.kubeloop.dev/v1alpha1): seed 004's cloud-native `at`.
import type { Condition, KubeObject } from './meta.ts';

export const AT_API_VERSION = 'cnat.kubeloop.dev/v1alpha1';
export const AT_KIND = 'At';

/** The seed's phases, spelled as in the seed. */
export const PHASE_PENDING = 'PENDING';
export const PHASE_RUNNING = 'RUNNING';
export const PHASE_DONE = 'DONE';
export type AtPhase = typeof PHASE_PENDING | typeof PHASE_RUNNING | typeof PHASE_DONE;

export type AtOutcome = 'Succeeded' | 'Failed';

export interface AtSpec {
  /** When to run, RFC 3339 in UTC: "2020-11-16T10:12:00Z". */
  schedule: string;
  /** A shell command line, run by `sh -c`. */
  command: string;
  /** Image that runs the command; the function's configured default (busybox) when absent. */
  image?: string;
}

export interface AtStatus {
  phase?: AtPhase;
  /** How the pod ended; set with phase DONE. */
  outcome?: AtOutcome;
  /** When the pod was created (phase RUNNING). */
  startedAt?: string;
  /** When the pod's command ended (phase DONE). */
  finishedAt?: string;
  conditions?: Condition[];
  observedGeneration?: number;
}

export type At = KubeObject & { spec?: AtSpec; status?: AtStatus };
