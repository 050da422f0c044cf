// The condition `kubeloop dev` keeps on a project's Loop or AdmissionHook while it runs the function: whether
// the local process listens, naming the command and its log, so a Loop that stalls or a hook that denies
// with "unreachable" says why and where to look. Pure: the writer (project-function.ts) reads and patches.
import type { Condition } from '../../api/meta.ts';

export type { Condition };
export const LOCAL_FUNCTION_CONDITION = 'LocalFunction';

export interface ProcessState {
  /** The module path or the command line, as the user gave it. */
  source: string;
  /** Its log file (the current or the last process's). */
  log: string;
  /** Running and answering; otherwise why not ("exited with code 1", "did not start: ..."). */
  problem?: string;
  /** Where the router and the gateway reach it: the Service and the local address, or the URL. */
  address: string;
}

/** The LocalFunction condition for this state. */
export function localFunctionCondition(state: ProcessState, now: Date): Condition {
  const time = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (!state.problem) {
    return { type: LOCAL_FUNCTION_CONDITION, status: 'True', reason: 'Listening', message: `kubeloop dev runs ${state.source} at ${state.address} (log ${state.log})`, lastTransitionTime: time };
  }
  return {
    type: LOCAL_FUNCTION_CONDITION,
    status: 'False',
    reason: 'NotListening',
    message: `kubeloop dev runs ${state.source} for ${state.address}, and it is not listening: ${state.problem}; see its log ${state.log} (saving a file in the project starts it again)`,
    lastTransitionTime: time,
  };
}

/** The conditions with `desired` in place of its type, or undefined when a reader would see no change. */
export function withLocalFunctionCondition(current: Condition[], desired: Condition): Condition[] | undefined {
  const old = current.find((c) => c.type === desired.type);
  if (old && old.status === desired.status && old.reason === desired.reason && old.message === desired.message) return undefined;
  const kept = old && old.status === desired.status ? { ...desired, lastTransitionTime: old.lastTransitionTime } : desired;
  return [...current.filter((c) => c.type !== desired.type), kept];
}
