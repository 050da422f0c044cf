// Seeded churn at a steady rate: PodSets created, scaled and deleted; annotated and unannotated pods and
// Deployments; Watchers created and edited while pods naming them are created; Ats due a few seconds
// ahead. Each operation is one API call; failures (a fault is in progress) are counted, never fatal.
import type { PodSet } from '../../api/podset.ts';
import type { KubeClient } from '../../lib/kube/index.ts';
import { WATCHER_ANNOTATION } from '../../api/watcher.ts';
import { LABEL_ANNOTATION, type WatcherPodCreate } from './invariants.ts';
import type { Prng } from './prng.ts';

export interface ChurnOptions {
  client: KubeClient;
  namespace: string;
  rng: Prng;
  /** Milliseconds since the soak started. */
  now: () => number;
  /** Whether the independent watch saw this At DONE (only those are deleted, so none escapes the check). */
  atDone: (name: string) => boolean;
  /** Operations started per second. */
  rate: number;
  /** At most this many calls in flight (an etcd pause must not pile up thousands). */
  maxInFlight: number;
  /** Told of each PodSet as a create or scale wrote it (the API server's answer), before any watch may show it. */
  onPodSetWritten?: (podset: PodSet) => void;
}

export interface ChurnRecord {
  /** Successful operations by kind ("PodSet created", ...). */
  done: Map<string, number>;
  failed: Map<string, number>;
  watcherPodCreates: WatcherPodCreate[];
  /** Sidecar image and create time of every Watcher. */
  watchers: Map<string, { image: string; createdMs: number }>;
}

const bump = (map: Map<string, number>, key: string): void => void map.set(key, (map.get(key) ?? 0) + 1);
const MERGE = 'application/merge-patch+json';

export class Churn {
  readonly record: ChurnRecord = { done: new Map(), failed: new Map(), watcherPodCreates: [], watchers: new Map() };
  readonly #o: ChurnOptions;
  readonly #podsets = new Set<string>();
  readonly #pods: string[] = [];
  readonly #watchedPods: string[] = [];
  readonly #deployments = new Set<string>();
  readonly #ats: string[] = [];
  #counter = 0;
  #inFlight = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly #pending = new Set<Promise<void>>();

  constructor(options: ChurnOptions) {
    this.#o = options;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  start(): void {
    this.#timer = setInterval(() => this.tick(), 1000 / this.#o.rate);
  }

  /** Stops starting operations and waits for those in flight. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.allSettled([...this.#pending]);
  }

  tick(): void {
    if (this.#inFlight >= this.#o.maxInFlight) {
      bump(this.record.failed, 'skipped (too many calls in flight)');
      return;
    }
    const [what, op] = this.#choose();
    this.#run(what, op);
  }

  /** Several pods naming Watchers at once: what a webhook replica kill should land in the middle of. */
  burstWatcherPods(count: number): void {
    for (let i = 0; i < count; i += 1) {
      const op = this.#watcherPod();
      if (op) this.#run('Watcher pod created', op);
    }
  }

  #run(what: string, op: () => Promise<unknown>): void {
    this.#inFlight += 1;
    const pending = op().then(
      () => bump(this.record.done, what),
      () => bump(this.record.failed, what),
    ).finally(() => {
      this.#inFlight -= 1;
      this.#pending.delete(pending);
    });
    this.#pending.add(pending);
  }

  #name(prefix: string): string {
    this.#counter += 1;
    return `${prefix}-${this.#counter}`;
  }

  #path(group: string, resource: string, name?: string): string {
    const base = group === 'core' ? `/api/v1/namespaces/${this.#o.namespace}/${resource}` : `/apis/${group}/namespaces/${this.#o.namespace}/${resource}`;
    return name ? `${base}/${name}` : base;
  }

  #choose(): [string, () => Promise<unknown>] {
    const { rng } = this.#o;
    for (;;) {
      const roll = rng.next();
      if (roll < 0.1 && this.#podsets.size < 5) return ['PodSet created', () => this.#createPodSet()];
      if (roll < 0.25 && this.#podsets.size > 0) return ['PodSet scaled', () => this.#scalePodSet()];
      if (roll < 0.3 && this.#podsets.size > 2) return ['PodSet deleted', () => this.#deletePodSet()];
      if (roll >= 0.3 && roll < 0.5) return this.#pods.length < 20 ? ['pod created', () => this.#createPod()] : ['pod deleted', () => this.#deleteOldest(this.#pods)];
      if (roll >= 0.5 && roll < 0.58) return this.#deployments.size < 3 ? ['Deployment created', () => this.#createDeployment()] : ['Deployment deleted', () => this.#deleteDeployment()];
      if (roll >= 0.58 && roll < 0.66) return this.record.watchers.size < 3 ? ['Watcher created', () => this.#createWatcher()] : ['Watcher edited', () => this.#editWatcher()];
      if (roll >= 0.66 && roll < 0.84) {
        if (this.#watchedPods.length >= 20) return ['Watcher pod deleted', () => this.#deleteOldest(this.#watchedPods)];
        const op = this.#watcherPod();
        if (op) return ['Watcher pod created', op];
      }
      if (roll >= 0.84) return this.#ats.length < 15 ? ['At created', () => this.#createAt()] : ['At deleted', () => this.#deleteAt()];
    }
  }

  async #createPodSet(): Promise<void> {
    const name = this.#name('ps');
    this.#podsets.add(name);
    const written = await this.#o.client.request<PodSet>({
      method: 'POST',
      path: this.#path('app.kubeloop.dev/v1alpha1', 'podsets'),
      body: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name }, spec: { replicas: this.#o.rng.int(1, 10) } },
    });
    this.#o.onPodSetWritten?.(written);
  }

  async #scalePodSet(): Promise<void> {
    const name = this.#o.rng.pick([...this.#podsets]);
    const written = await this.#o.client.request<PodSet>({ method: 'PATCH', path: this.#path('app.kubeloop.dev/v1alpha1', 'podsets', name), contentType: MERGE, body: { spec: { replicas: this.#o.rng.int(1, 10) } } });
    this.#o.onPodSetWritten?.(written);
  }

  async #deletePodSet(): Promise<void> {
    const name = this.#o.rng.pick([...this.#podsets]);
    this.#podsets.delete(name);
    await this.#o.client.request({ method: 'DELETE', path: this.#path('app.kubeloop.dev/v1alpha1', 'podsets', name) });
  }

  async #createPod(): Promise<void> {
    const annotated = this.#o.rng.chance(0.5);
    const name = this.#name(annotated ? 'labelled' : 'plain');
    this.#pods.push(name);
    await this.#o.client.request({
      method: 'POST',
      path: this.#path('core', 'pods'),
      body: { metadata: { name, ...(annotated ? { annotations: { [LABEL_ANNOTATION]: 'true' } } : {}) }, spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } },
    });
  }

  /** Deletes the oldest pod of a list: bare pods and Watcher pods are capped separately. */
  async #deleteOldest(pods: string[]): Promise<void> {
    const name = pods.shift();
    if (name) await this.#o.client.request({ method: 'DELETE', path: this.#path('core', 'pods', name) });
  }

  async #createDeployment(): Promise<void> {
    const annotated = this.#o.rng.chance(0.5);
    const name = this.#name(annotated ? 'labelled-deploy' : 'plain-deploy');
    this.#deployments.add(name);
    await this.#o.client.request({
      method: 'POST',
      path: this.#path('apps/v1', 'deployments'),
      body: {
        metadata: { name },
        spec: {
          replicas: this.#o.rng.int(1, 2),
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name }, ...(annotated ? { annotations: { [LABEL_ANNOTATION]: 'true' } } : {}) },
            spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
          },
        },
      },
    });
  }

  async #deleteDeployment(): Promise<void> {
    const name = this.#o.rng.pick([...this.#deployments]);
    this.#deployments.delete(name);
    await this.#o.client.request({ method: 'DELETE', path: this.#path('apps/v1', 'deployments', name) });
  }

  async #createWatcher(): Promise<void> {
    const name = this.#name('watcher');
    const image = `busybox:soak-${name}`;
    await this.#o.client.request({
      method: 'POST',
      path: this.#path('watch.kubeloop.dev/v1alpha1', 'watchers'),
      body: {
        apiVersion: 'watch.kubeloop.dev/v1alpha1',
        kind: 'Watcher',
        metadata: { name },
        spec: { container: { name: 'watch', image, args: ['tail', '-f', '/data/log'] }, configData: { LEVEL: 'info' } },
      },
    });
    this.record.watchers.set(name, { image, createdMs: this.#o.now() });
  }

  async #editWatcher(): Promise<void> {
    const name = this.#o.rng.pick([...this.record.watchers.keys()]);
    const level = this.#o.rng.pick(['debug', 'info', 'warn']);
    await this.#o.client.request({ method: 'PATCH', path: this.#path('watch.kubeloop.dev/v1alpha1', 'watchers', name), contentType: MERGE, body: { spec: { configData: { LEVEL: level } } } });
  }

  #watcherPod(): (() => Promise<void>) | undefined {
    if (this.record.watchers.size === 0) return undefined;
    const watcher = this.#o.rng.pick([...this.record.watchers.keys()]);
    const name = this.#name('watched');
    this.#watchedPods.push(name);
    return async () => {
      const startMs = this.#o.now();
      await this.#o.client.request({
        method: 'POST',
        path: this.#path('core', 'pods'),
        body: { metadata: { name, annotations: { [WATCHER_ANNOTATION]: watcher } }, spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } },
      });
      this.record.watcherPodCreates.push({ pod: name, watcher, startMs, endMs: this.#o.now() });
    };
  }

  async #createAt(): Promise<void> {
    const name = this.#name('at');
    this.#ats.push(name);
    const schedule = new Date(Date.now() + this.#o.rng.int(2, 8) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await this.#o.client.request({
      method: 'POST',
      path: this.#path('cnat.kubeloop.dev/v1alpha1', 'ats'),
      body: { apiVersion: 'cnat.kubeloop.dev/v1alpha1', kind: 'At', metadata: { name }, spec: { schedule, command: 'echo soak' } },
    });
  }

  async #deleteAt(): Promise<void> {
    const index = this.#ats.findIndex((name) => this.#o.atDone(name));
    if (index === -1) throw new Error('no At is DONE yet');
    const [name] = this.#ats.splice(index, 1);
    await this.#o.client.request({ method: 'DELETE', path: this.#path('cnat.kubeloop.dev/v1alpha1', 'ats', name!) });
  }
}
