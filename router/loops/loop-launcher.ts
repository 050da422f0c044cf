// What the Loop controller asks of the cluster for one Loop: the SubjectAccessReview of its ServiceAccount, its
// kinds' scope, and a runner that acts as that ServiceAccount, with its signing key read and then followed. A plain
// interface, so the controller's carry-out is tested with an in-memory one (loop-controller.test.ts).
import type { V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { serviceAccountUser, type KubeClient } from '../../lib/kube/kube-client.ts';
import type { NamedObjectWatch } from '../../lib/kube/named-object-watch.ts';
import type { RateLimit } from '../../lib/kube/rate-limiter.ts';
import type { TenantBudget } from '../base/tenant-budget.ts';
import { tenantOf } from '../base/tenant-weights.ts';
import { LoopSpecError, type LoopConfig } from '../base/loop-spec.ts';
import { clusterScopedKindProblem, namedKinds } from '../base/loop-confinement.ts';
import type { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { LoopRunner, type LoopHealth, type LoopRunnerDeps } from '../intake/loop-runner.ts';
import { reviewAccess, type AccessVerdict } from '../../lib/kube/access-review.ts';
import { loopAccessChecks } from './loop-access.ts';
import type { VersionCondition } from '../reconcile/function-versions.ts';
import { readSigningKeys, watchSigningKeys } from './signing-key.ts';
import { releasePrimaries } from './primary-release.ts';

/** A Loop's own bucket for what it does as its ServiceAccount when the router gives none. */
const DEFAULT_LOOP_RATE_LIMIT = { qps: 50, burst: 100 };

export interface LaunchHooks {
  /** The runner's health (calls succeeding or failing, a watch forbidden, a function ref resolving). */
  onHealth(health: LoopHealth): void;
  /** The signing Secret broke while the Loop ran: the controller stops the Loop until it is fixed. */
  signingBroken(message: string): void;
  /** A shadow's or canary's condition changed, with a Warning event to record when given. */
  onCondition(condition: VersionCondition, warning?: { reason: string; message: string }): void;
}

/** A runner built for a Loop, not started yet. */
export interface LaunchedLoop {
  readonly runner: LoopRunner;
  /** Once the runner started: follow the signing Secret, so a rotated key is used from the next call. */
  followSigningKey(): void;
  /** Stops the runner and whatever follows its Secret. */
  stop(): Promise<void>;
  /** Milliseconds its API requests waited for the shared budget (or its own cap), over its life. */
  apiThrottledMs?(): number;
}

export interface LoopLauncher {
  /** May the Loop's ServiceAccount list and watch everything the Loop would receive? */
  review(config: LoopConfig): Promise<AccessVerdict>;
  /** Reads the signing key as the Loop's ServiceAccount (SigningSecretError when unusable) and builds the runner. */
  launch(config: LoopConfig, hooks: LaunchHooks): Promise<LaunchedLoop>;
  /** Removes the Loop's finalizer from its primaries, as its ServiceAccount (primary-release.ts); how many it released. */
  release(config: LoopConfig): Promise<number>;
}

export interface KubeLoopLauncherOptions {
  runnerDeps: Omit<LoopRunnerDeps, 'onHealth'>;
  /** The router's own client: reviews are asked with it, and each Loop's client impersonates from it. */
  client: KubeClient;
  logger: Logger;
  /** Each Loop's own API budget, for the writes and reads made as its ServiceAccount (0 QPS: none of its own). */
  loopRateLimit?: RateLimit;
  /** The budget all Loops share by tenant weight (--fair-api-qps); the per-Loop limit is taken first. */
  budget?: TenantBudget;
}

/** The launcher on a real API server. */
export function kubeLoopLauncher(o: KubeLoopLauncherOptions): LoopLauncher {
  return {
    async review(config) {
      const { discovery } = o.runnerDeps;
      // The primary and owned kinds, and each related kind where its entry looks.
      return reviewAccess(o.client, config.serviceAccount, await loopAccessChecks(config, (k) => discovery.resolve(k.apiVersion, k.kind)));
    },
    async release(config) {
      const resource = await o.runnerDeps.discovery.resolve(config.for.apiVersion, config.for.kind);
      const own = o.loopRateLimit && o.loopRateLimit.qps > 0 ? o.loopRateLimit : DEFAULT_LOOP_RATE_LIMIT;
      const client = o.client.impersonating({ user: serviceAccountUser(config.serviceAccount.namespace, config.serviceAccount.name) }, own);
      return releasePrimaries(client, resource, config.namespaces, config.finalizer);
    },
    async launch(config, hooks) {
      const own = o.loopRateLimit ?? DEFAULT_LOOP_RATE_LIMIT;
      const shared = o.budget && !o.budget.unlimited ? o.budget.forLoop(tenantOf(config), config.id, own) : undefined;
      const loopClient = o.client.impersonating({ user: serviceAccountUser(config.serviceAccount.namespace, config.serviceAccount.name) }, shared ?? own);
      // Read as the Loop's ServiceAccount: a Loop can only use a key it may read itself.
      if (config.signingSecretRef) {
        try {
          config.signingKey = await readSigningKeys(loopClient, config.signingSecretRef);
        } catch (error) {
          shared?.close();
          throw error;
        }
      }
      try {
        // The shadow's and canary's keys are read once, at start (a rotation is seen when the Loop restarts).
        for (const version of [config.shadow, config.canary]) if (version?.signingSecretRef) version.signingKey = await readSigningKeys(loopClient, version.signingSecretRef);
      } catch (error) {
        shared?.close();
        throw error;
      }
      const runner = new LoopRunner(config, {
        ...o.runnerDeps,
        client: loopClient,
        onHealth: (_loop, health) => hooks.onHealth(health),
        onCondition: (_loop, condition, warning) => hooks.onCondition(condition, warning),
      });
      let signingWatch: NamedObjectWatch<V1Secret> | undefined;
      return {
        runner,
        apiThrottledMs: () => shared?.throttledMs() ?? 0,
        followSigningKey() {
          if (config.signingSecretRef && config.signingKey) signingWatch = followSigningKey(o.logger, config, loopClient, hooks);
        },
        async stop() {
          await signingWatch?.stop();
          await runner.stop();
          shared?.close();
        },
      };
    },
  };
}

/** A namespaced Loop naming a cluster-scoped kind (discovery tells): refused as an invalid spec. */
export async function clusterScopedKindError(config: LoopConfig, discovery: Pick<ResourceDiscovery, 'resolve'>): Promise<LoopSpecError | undefined> {
  if (config.namespace === undefined) return undefined;
  const kinds = await Promise.all(namedKinds(config).map(async (k) => ({ ...k, namespaced: (await discovery.resolve(k.ref.apiVersion, k.ref.kind)).namespaced })));
  const problem = clusterScopedKindProblem(kinds);
  return problem ? new LoopSpecError(config.id, problem.field, problem.problem) : undefined;
}

/** Rotation without a restart: the runner reads config.signingKey on every call. */
function followSigningKey(logger: Logger, config: LoopConfig, loopClient: KubeClient, hooks: LaunchHooks): NamedObjectWatch<V1Secret> {
  const fields = { loop: config.id, secret: `${config.signingSecretRef!.namespace}/${config.signingSecretRef!.name}` };
  return watchSigningKeys(loopClient, config.signingSecretRef!, config.signingKey!, {
    rotated: (keys) => {
      config.signingKey = keys;
      logger.info({ ...fields, keys: keys.length }, 'signing key changed; the next calls are signed with it');
    },
    broken: (error) => {
      logger.warn({ ...fields, err: error.message }, 'signing Secret broke; the Loop stops until it is fixed');
      hooks.signingBroken(error.message);
    },
    unwatchable: (error) => {
      logger.warn({ ...fields, err: error.message }, 'cannot watch the signing Secret (grant the ServiceAccount list and watch on it): a rotated key is only seen when the Loop restarts');
    },
  });
}
