// Reviews follow RBAC: metadata-only watches of Roles, RoleBindings, ClusterRoles and ClusterRoleBindings, whose
// writes are gathered for a short window and told as one RbacChanges (its user reviews again the access the
// changes may alter). A process that may not list and watch RBAC says so once and relies on its periodic review.
import type { Logger } from 'pino';
import type { KubeObject } from '../contract/types.ts';
import { reviewOwnWatchAccess } from './access-review.ts';
import type { InformerHandlers } from './informer-cache.ts';
import { isApiError, type KubeClient } from './kube-client.ts';
import type { ResourceInfo } from './resource-paths.ts';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const RBAC_KINDS: readonly ResourceInfo[] = (
  [
    ['Role', 'roles', true],
    ['RoleBinding', 'rolebindings', true],
    ['ClusterRole', 'clusterroles', false],
    ['ClusterRoleBinding', 'clusterrolebindings', false],
  ] as const
).map(([kind, plural, namespaced]) => ({ group: RBAC_GROUP, version: 'v1', apiVersion: `${RBAC_GROUP}/v1`, kind, plural, namespaced }));

/**
 * The RBAC writes of one debounce window: a ClusterRole or ClusterRoleBinding (`cluster`), and the namespaces of
 * the Roles and RoleBindings written.
 */
export interface RbacChanges {
  cluster: boolean;
  namespaces: ReadonlySet<string>;
}

/** What the window reads of a metadata-only informer of one RBAC kind (an Informer, or one shared through a registry). */
export interface RbacInformer {
  readonly name: string;
  readonly hasSynced: boolean;
  on<E extends 'add' | 'update' | 'delete' | 'restart' | 'watching'>(event: E, handler: InformerHandlers<KubeObject>[E]): unknown;
}

export interface RbacInformerLease {
  informer: RbacInformer;
  release(): Promise<void>;
}

/** A burst of RBAC writes (an aggregated ClusterRole's update, a chart install) costs one review pass. */
export const DEFAULT_RBAC_DEBOUNCE_MS = 1000;

export interface RbacWatchOptions {
  /** A started metadata-only informer of the kind, cluster-wide. */
  acquire: (resource: ResourceInfo) => Promise<RbacInformerLease>;
  /**
   * What `acquire` first waits for that needs no access (the kind's discovery), asked while the access review
   * runs so the watches follow its answer without another round trip. Its failure is `acquire`'s to report.
   */
  prepare?: (resource: ResourceInfo) => Promise<unknown>;
  client: KubeClient;
  logger: Logger;
  /** Who watches and what it reviews, for the logs: e.g. "router" and "a Loop's access". */
  process: string;
  reviewed: string;
  /** The writes of one window, told once it closes. */
  onChanges: (changes: RbacChanges) => void;
  /** The watch stopped telling changes (the process's ClusterRole lost the read): only the timer reviews now. */
  onLost: (message: string) => void;
  /**
   * Every refused watch is accepted again (the read was given back): changes are told again. What changed
   * meanwhile is told first as one change of everything (`cluster`), since the watch may have missed it.
   */
  onRegained?: () => void;
  debounceMs?: number;
}

export interface RbacWatch {
  stop(): Promise<void>;
}

/**
 * Starts the watches when the process may list and watch every RBAC kind cluster-wide (SelfSubjectAccessReview);
 * otherwise logs the missing right and returns why, and nothing is watched.
 */
export async function watchRbac(o: RbacWatchOptions): Promise<RbacWatch | { denied: string }> {
  const consequence = `${o.reviewed} is reviewed on the --access-review-seconds timer only, so a revoked right takes effect at the next sweep`;
  // Nothing is watched before the review allows it; the discovery the watches need overlaps the review.
  for (const resource of RBAC_KINDS) o.prepare?.(resource).catch(() => {});
  const verdict = await reviewOwnWatchAccess({ client: o.client, resources: RBAC_KINDS, logger: o.logger, process: o.process, what: 'RBAC', consequence });
  if (!verdict.allowed) return { denied: verdict.message };
  return new RbacChangeWindow(o).start();
}

/** The watches and the window that gathers their writes. */
class RbacChangeWindow implements RbacWatch {
  readonly #leases: RbacInformerLease[] = [];
  #cluster = false;
  readonly #namespaces = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #lost = false;
  /** The informers whose watch or list was refused (403) and has not been accepted since. */
  readonly #refused = new Set<RbacInformer>();
  #stopped = false;

  constructor(private readonly o: RbacWatchOptions) {}

  async start(): Promise<this> {
    try {
      for (const resource of RBAC_KINDS) this.#leases.push(await this.o.acquire(resource));
    } catch (error) {
      await this.stop();
      throw error;
    }
    for (const lease of this.#leases) {
      const { informer } = lease;
      // The first list tells what exists, not what changed: the first reviews already saw it.
      const seen = (object: KubeObject) => {
        if (informer.hasSynced) this.#note(object);
      };
      informer.on('add', seen);
      informer.on('update', seen);
      informer.on('delete', seen);
      informer.on('restart', (_reason, error) => {
        if (!error || !isApiError(error, 403) || this.#stopped) return;
        this.#refused.add(informer);
        if (this.#lost) return;
        this.#lost = true;
        this.o.logger.warn({ resource: informer.name, err: error.message }, `the RBAC watch was refused (the ${this.o.process}'s ClusterRole lost the read?): ${this.o.reviewed} is reviewed on the --access-review-seconds timer only`);
        this.o.onLost(error.message);
      });
      informer.on('watching', () => {
        if (!this.#refused.delete(informer) || this.#refused.size > 0 || !this.#lost || this.#stopped) return;
        this.#lost = false;
        this.o.logger.info({ resource: informer.name }, `the RBAC watch is accepted again: ${this.o.reviewed} is reviewed again within seconds of a change`);
        this.o.onChanges({ cluster: true, namespaces: new Set() });
        this.o.onRegained?.();
      });
    }
    return this;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await Promise.all(this.#leases.splice(0).map((l) => l.release()));
  }

  #note(object: KubeObject): void {
    if (this.#stopped) return;
    const namespace = object.metadata?.namespace;
    if (namespace) this.#namespaces.add(namespace);
    else this.#cluster = true;
    // The window opens with its first write and is not extended: a steady stream of writes costs a pass per window.
    this.#timer ??= setTimeout(() => this.#flush(), this.o.debounceMs ?? DEFAULT_RBAC_DEBOUNCE_MS);
  }

  #flush(): void {
    this.#timer = undefined;
    const changes: RbacChanges = { cluster: this.#cluster, namespaces: new Set(this.#namespaces) };
    this.#cluster = false;
    this.#namespaces.clear();
    if (!this.#stopped) this.o.onChanges(changes);
  }
}
