// A running Loop's shadow and canary: their URLs, literal or followed through their refs as
// spec.function.ref is (function-ref-watch.ts), and the FunctionVersions that calls and compares them.
import type { LoopConfig } from '../base/loop-spec.ts';
import { FunctionVersions } from '../reconcile/function-versions.ts';
import { FunctionRefWatch } from './function-ref-watch.ts';
import type { InformerSource } from './informer-registry.ts';
import type { VersionCondition, VersionDeps } from '../reconcile/function-versions.ts';

/** What the versions need of the runner's deps (LoopRunnerDeps has all of it). */
export interface VersionWatchDeps extends Omit<VersionDeps, 'divergence' | 'now'> {
  onCondition?: (loop: string, condition: VersionCondition, warning?: { reason: string; message: string }) => void;
}

export interface FunctionVersionWatch {
  versions: FunctionVersions;
  /** Stops following the versions' refs (the calls in flight are awaited with versions.settled()). */
  stopWatching(): Promise<void>;
}

/** undefined when the Loop has neither a shadow nor a canary. `rolledBack`: send the canary's keys again. */
export async function watchFunctionVersions(loop: LoopConfig, deps: VersionWatchDeps, registry: InformerSource, rolledBack: () => void): Promise<FunctionVersionWatch | undefined> {
  if (!loop.shadow && !loop.canary) return undefined;
  const urls = { shadow: loop.shadow?.url, canary: loop.canary?.url };
  const watches: FunctionRefWatch[] = [];
  const stopWatching = async () => {
    for (const watch of watches.splice(0)) await watch.stop();
  };
  try {
    for (const which of ['shadow', 'canary'] as const) {
      const ref = loop[which]?.ref;
      if (!ref) continue;
      const watch = new FunctionRefWatch(ref, loop.urlPolicy, (resolution) => {
        urls[which] = resolution.ok ? resolution.url : undefined;
        const fields = { loop: loop.id, version: which };
        if (resolution.ok) deps.logger.info({ ...fields, url: resolution.url }, `${which} function reference resolved`);
        else deps.logger.warn({ ...fields, reason: resolution.reason, err: resolution.message }, `${which} function reference does not resolve; ${which === 'shadow' ? 'no call is shadowed' : 'every key goes to the stable version'} until it does`);
      });
      watches.push(watch);
      await watch.start(registry);
      // Not awaited: a shadow or canary that does not resolve yet must not hold up the Loop's start.
      watch.synced().catch(() => {});
    }
  } catch (error) {
    await stopWatching();
    throw error;
  }
  const versions = new FunctionVersions(
    loop,
    { invoke: deps.invoke, metrics: deps.metrics, logger: deps.logger, ...(deps.shadowPairs ? { shadowPairs: deps.shadowPairs } : {}) },
    { condition: (condition, warning) => deps.onCondition?.(loop.id, condition, warning), rolledBack },
    { shadow: () => urls.shadow, canary: () => urls.canary },
  );
  versions.start();
  return { versions, stopWatching };
}
