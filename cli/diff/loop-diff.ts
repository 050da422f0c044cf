// `kubeloop diff --loop`: for every primary of a Loop, the request the router would send, answered by the
// running version (baseline) and the new one (candidate); where they differ, the new version's writes are
// dry-run against the live objects. Bounded concurrency; reads and dry-runs share the client's rate limit.
import type { KubeObject, ReconcileResponse } from '../../lib/contract/types.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import type { JsonChange } from '../../lib/replay/json-diff.ts';
import { callFunction } from '../../lib/replay/replay-client.ts';
import type { SigningKeys } from '../../lib/signing/webhook-signature.ts';
import { finalizerPhase } from '../../router/index.ts';
import { diffRequest } from './diff-request.ts';
import { dryRunTarget, type DryRunOutcome } from './dry-run.ts';
import { rereadPrimary, type LoopState } from './loop-state.ts';
import { mapBounded } from './map-bounded.ts';
import { changesAgainstLive, diffResponses, type DiffOutcome, type ResponseDiff } from './object-diff.ts';

export interface TargetAfter {
  target: string;
  /** What the new version's writes on the target would do (server dry-run). */
  result: 'changed' | 'created' | 'deleted' | 'none' | 'refused';
  changes?: JsonChange[];
  message?: string;
}

export interface ObjectReport {
  /** "<Kind> <namespace>/<name>" of the primary. */
  object: string;
  outcome: DiffOutcome;
  diff?: ResponseDiff;
  after?: TargetAfter[];
  error?: string;
}

export interface LoopDiffOptions {
  candidateUrl: string;
  baselineUrl: string;
  concurrency: number;
  now: Date;
  /** The Loop's signing key(s), read as its ServiceAccount: both versions get requests signed as the router signs them. */
  signingKey?: SigningKeys | undefined;
  onProgress?: (done: number, total: number) => void;
}

function afterOf(target: string, outcome: DryRunOutcome): TargetAfter {
  switch (outcome.kind) {
    case 'none':
      return { target, result: 'none' };
    case 'refused':
      return { target, result: 'refused', message: outcome.message };
    case 'deleted':
      return { target, result: 'deleted' };
    case 'object':
      return { target, result: outcome.live ? 'changed' : 'created', changes: changesAgainstLive(outcome.live, outcome.after) };
  }
}

async function diffOne(state: LoopState, primary: KubeObject, options: LoopDiffOptions): Promise<ObjectReport> {
  const { config } = state;
  const object = `${primary.kind ?? ''} ${objectKey(primary.metadata)}`;
  const phase = finalizerPhase(config, primary, false);
  if (phase.kind === 'skip') return { object, outcome: 'skipped' };
  // A primary still without the finalizer gets it first, then this same call: the function's answer is what counts.
  const request = diffRequest(state, primary, phase.kind === 'call' && phase.finalizing, options.now);
  const [baseline, candidate] = await Promise.all([
    callFunction(request, { url: options.baselineUrl, timeoutMs: config.timeoutMs, signingKeys: options.signingKey }),
    callFunction(request, { url: options.candidateUrl, timeoutMs: config.timeoutMs, signingKeys: options.signingKey }),
  ]);
  if (!baseline.ok) return { object, outcome: 'error', error: `the running version (${options.baselineUrl}): ${baseline.message}` };
  if (!candidate.ok) return { object, outcome: 'error', error: `the new version: ${candidate.message}` };
  const diff = diffResponses(request, baseline.response as ReconcileResponse, candidate.response as ReconcileResponse);
  if (diff.targets.length === 0 && diff.response.length === 0) return { object, outcome: 'unchanged' };
  const ctx = { client: state.client, discovery: state.discovery, fieldManager: config.fieldManager, primary, metadataOnly: config.metadataOnly };
  const after: TargetAfter[] = [];
  for (const target of diff.targets) {
    if (target.target === 'event' || target.candidate.length === 0) continue;
    after.push(afterOf(target.target, await dryRunTarget(ctx, target.candidate)));
  }
  return { object, outcome: 'changed', diff, after };
}

/** How often a primary that changed between the list and a dry-run is diffed again, as the router would call again. */
export const STALE_REDIFFS = 3;

/**
 * One primary's report. A write refused because the primary changed after it was listed (a controller's status
 * write between the list and the dry-run fails the patch's resourceVersion test) is no finding: the router
 * would call both versions again with the new state, so diff does too, with the primary as it is now.
 */
async function diffCurrent(state: LoopState, primary: KubeObject, options: LoopDiffOptions): Promise<ObjectReport> {
  let current = primary;
  for (let attempt = 0; ; attempt++) {
    const report = await diffOne(state, current, options);
    if (attempt === STALE_REDIFFS || !report.after?.some((a) => a.result === 'refused')) return report;
    const now = await rereadPrimary(state, current);
    if (!now || now.metadata?.resourceVersion === current.metadata?.resourceVersion) return report;
    current = now;
  }
}

/** Every primary's report, in the order of `state.primaries`, at most `concurrency` at a time. */
export async function diffLoop(state: LoopState, options: LoopDiffOptions): Promise<ObjectReport[]> {
  return mapBounded(
    state.primaries,
    options.concurrency,
    async (primary) => {
      try {
        return await diffCurrent(state, primary, options);
      } catch (error) {
        return { object: `${primary.kind ?? ''} ${objectKey(primary.metadata)}`, outcome: 'error', error: (error as Error).message };
      }
    },
    options.onProgress,
  );
}
