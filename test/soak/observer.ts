// Independent watches (not the router's) on the soak namespace's pods, PodSets and Ats: they check the
// continuous invariants as events arrive and hold the final state for the end-of-run checks.
import type { V1Pod } from '@kubernetes/client-node';
import type { At } from '../../api/at.ts';
import type { PodSet } from '../../api/podset.ts';
import { Informer, ResourceDiscovery, type KubeClient } from '../../lib/kube/index.ts';
import { controllerUid, isLivePod, labelViolation, podSetBoundViolation, ReplicasHistory, type FirstSeenPod, type Violation } from './invariants.ts';

/** How much older a spec the router may act on than the one our watch shows (see ReplicasHistory). */
export const REPLICAS_LAG_WINDOW_MS = 10_000;
const BOUND_SETTLE_MS = 3000;

export interface Observer {
  pods: Informer<V1Pod>;
  podsets: Informer<PodSet>;
  ats: Informer<At>;
  /** Pods as first observed (containers and the injected annotation), by name. */
  firstSeen: Map<string, FirstSeenPod>;
  /** Records a pod's first sight unless the watch already did. */
  noteFirstSeen(pod: V1Pod): void;
  /** Records a PodSet's replicas as the churn wrote them: a spec our own watch may show late, or never. */
  noteWritten(podset: PodSet): void;
  atDone(name: string): boolean;
  stop(): Promise<void>;
}

export async function startObserver(client: KubeClient, namespace: string, now: () => number, report: (v: Violation) => void): Promise<Observer> {
  const discovery = new ResourceDiscovery(client);
  const informer = async <T extends object>(apiVersion: string, kind: string): Promise<Informer<T & { metadata?: V1Pod['metadata'] }>> => {
    const resource = await discovery.resolve(apiVersion, kind);
    return new Informer<T & { metadata?: V1Pod['metadata'] }>({ client, resource, namespace });
  };
  const pods = (await informer<V1Pod>('v1', 'Pod')) as Informer<V1Pod>;
  const podsets = (await informer<PodSet>('app.kubeloop.dev/v1alpha1', 'PodSet')) as Informer<PodSet>;
  const ats = (await informer<At>('cnat.kubeloop.dev/v1alpha1', 'At')) as Informer<At>;
  const history = new ReplicasHistory();
  const firstSeen = new Map<string, FirstSeenPod>();
  const done = new Set<string>();
  // One report per pod and per PodSet: a wrong state persists across many events.
  const reported = new Set<string>();
  const once = (key: string, violation: Violation | undefined): void => {
    if (!violation || reported.has(key)) return;
    reported.add(key);
    report(violation);
  };

  const noteFirstSeen = (pod: V1Pod): void => {
    const name = pod.metadata?.name ?? '';
    if (firstSeen.has(name)) return;
    const injected = pod.metadata?.annotations?.['watch.kubeloop.dev/injected'];
    firstSeen.set(name, { images: (pod.spec?.containers ?? []).map((c) => c.image ?? ''), ...(injected ? { injected } : {}) });
  };
  const onPod = (pod: V1Pod): void => {
    const name = pod.metadata?.name ?? '';
    noteFirstSeen(pod);
    once(`label/${name}`, labelViolation(pod, now()));
  };
  // Only a pod appearing can overshoot. Its PodSet's scale-up may reach our PodSet watch a moment after
  // the pod reaches our pod watch, so the bound is judged a little later, on the history by then.
  const timers = new Set<NodeJS.Timeout>();
  // After an API server restart our PodSet watch (a CRD: 503 until its paths are installed, then 429 while
  // its storage initialises, each retried with backoff) can stay behind the pod watch for many seconds,
  // so a scale-up the router already saw is missing from the history. The PodSet as stored now is a spec
  // the router may have acted on too; a real overshoot stays one against it.
  const freshReplicas = async (name: string): Promise<number | undefined> => {
    try {
      const current = await client.request<PodSet>({ path: `/apis/app.kubeloop.dev/v1alpha1/namespaces/${namespace}/podsets/${encodeURIComponent(name)}` });
      return current.spec?.replicas ?? 1;
    } catch {
      return undefined;
    }
  };
  const onNewPod = (pod: V1Pod): void => {
    const owner = controllerUid(pod);
    const podset = owner ? podsets.store.list().find((ps) => ps.metadata?.uid === owner) : undefined;
    if (!owner || !podset || !isLivePod(pod)) return;
    const live = pods.store.list().filter((p) => controllerUid(p) === owner && isLivePod(p)).length;
    const seenMs = now();
    const timer = setTimeout(() => {
      timers.delete(timer);
      void freshReplicas(podset.metadata?.name ?? '').then((current) => {
        const watched = history.maxWithin(owner, seenMs + BOUND_SETTLE_MS, REPLICAS_LAG_WINDOW_MS + BOUND_SETTLE_MS);
        const allowed = current === undefined ? watched : Math.max(watched ?? 0, current);
        once(`bound/${podset.metadata?.name}/${live}`, podSetBoundViolation(podset.metadata?.name ?? '', live, allowed, seenMs));
      });
    }, BOUND_SETTLE_MS);
    timers.add(timer);
  };
  const onPodSet = (ps: PodSet): void => {
    if (ps.metadata?.uid) history.record(ps.metadata.uid, now(), ps.spec?.replicas ?? 1);
  };
  // Found by the soak (CI, seed 7): a PodSet created with 10 replicas and scaled to 5 a second later, as a restarted
  // API server came back; our PodSet watch (a CRD: 503, then 429 while its storage initialises) saw only the 5, the
  // fresh read too, and the router's 10 correct pods read as an overshoot. The churn's own writes say what was in
  // force, whatever our watch saw.
  podsets.on('add', onPodSet);
  podsets.on('update', onPodSet);
  pods.on('add', (pod) => {
    onPod(pod);
    onNewPod(pod);
  });
  pods.on('update', onPod);
  const onAt = (at: At): void => {
    if (at.status?.phase === 'DONE' && at.metadata?.name) done.add(at.metadata.name);
  };
  ats.on('add', onAt);
  ats.on('update', onAt);

  // PodSets first: a pod's bound needs its PodSet's history.
  podsets.start();
  await podsets.waitForSync();
  pods.start();
  ats.start();
  await Promise.all([pods.waitForSync(), ats.waitForSync()]);
  return {
    pods,
    podsets,
    ats,
    firstSeen,
    noteFirstSeen,
    noteWritten: onPodSet,
    atDone: (name) => done.has(name),
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      await Promise.all([pods.stop(), podsets.stop(), ats.stop()]);
    },
  };
}
