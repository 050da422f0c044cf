// The seeded fault schedule: which fault, against what, when and for how long. Pure, so the plan of a
// seed can be printed and unit-tested without a cluster.
import type { Prng } from './prng.ts';

export const FAULT_KINDS = [
  'router-leader-kill',
  'function-kill',
  'function-misbehave',
  'apiserver-restart',
  'etcd-pause',
  'webhook-kill',
  'cert-rotation',
  'watch-cut',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const MISBEHAVIOURS = ['500', 'garbage', 'hang'] as const;
export type Misbehaviour = (typeof MISBEHAVIOURS)[number];

export interface PlannedFault {
  /** Milliseconds after the churn started. */
  atMs: number;
  kind: FaultKind;
  /** Function name for function faults. */
  target?: string;
  misbehaviour?: Misbehaviour;
  /** How long the fault lasts (pause, misbehaviour, downtime before a restart). */
  holdMs: number;
}

export interface FaultPlanOptions {
  durationMs: number;
  /** No fault before this (the platform settles first). */
  warmupMs: number;
  /** Mean gap between the extra faults after every kind had its turn. */
  meanGapMs: number;
  functions: readonly string[];
}

function holdFor(kind: FaultKind, rng: Prng): number {
  switch (kind) {
    case 'etcd-pause':
      return Math.round(rng.between(2000, 5000));
    case 'function-misbehave':
      return Math.round(rng.between(3000, 10_000));
    case 'function-kill':
    case 'router-leader-kill':
    case 'webhook-kill':
      return Math.round(rng.between(1000, 6000));
    default:
      return 0;
  }
}

function faultAt(atMs: number, kind: FaultKind, rng: Prng, functions: readonly string[]): PlannedFault {
  const fault: PlannedFault = { atMs: Math.round(atMs), kind, holdMs: holdFor(kind, rng) };
  if (kind === 'function-kill' || kind === 'function-misbehave') fault.target = rng.pick(functions);
  if (kind === 'function-misbehave') fault.misbehaviour = rng.pick(MISBEHAVIOURS);
  return fault;
}

/**
 * Every kind once at a random time within [warmup, duration), so even a short run injects each kind,
 * then more faults of random kinds as a Poisson process; faults overlap freely.
 */
export function planFaults(rng: Prng, options: FaultPlanOptions): PlannedFault[] {
  const { durationMs, warmupMs, meanGapMs, functions } = options;
  if (durationMs <= warmupMs) throw new Error(`the run (${durationMs} ms) must be longer than the warm-up (${warmupMs} ms)`);
  const span = durationMs - warmupMs;
  const faults = FAULT_KINDS.map((kind) => faultAt(warmupMs + rng.next() * span, kind, rng, functions));
  for (let at = warmupMs - meanGapMs * Math.log(1 - rng.next()); at < durationMs; at -= meanGapMs * Math.log(1 - rng.next())) {
    faults.push(faultAt(at, rng.pick(FAULT_KINDS), rng, functions));
  }
  return faults.sort((a, b) => a.atMs - b.atMs);
}

/** When the last fault is over: the start of the quiet period convergence is measured from. */
export function lastFaultEndMs(faults: readonly PlannedFault[]): number {
  return faults.reduce((end, f) => Math.max(end, f.atMs + f.holdMs), 0);
}
