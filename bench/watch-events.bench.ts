// npm run bench:watch-events: CPU per watch event of the router's informer (lib/kube/informer.ts with
// the options and handlers router/intake gives it), replaying a recorded stream of pod events from memory: no
// cluster, one process: full pods, and metadata-only pods through a metadata-only Loop's update filter, in JSON and
// in protobuf (what a metadata-only informer asks for), today's tree only.
// BENCH_WATCH_BASELINE=<checkout> adds that checkout's informer as a second variant, the rounds alternating
// which goes first, so a lever is measured against its parent in one run.
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { alternatingRounds, mean } from './alternating-rounds.ts';
import { machineLoad } from './process-figures.ts';
import { chunkBytes, chunked, recordedPodWatch } from './recorded-pod-watch.ts';
import { protobufWatchFrames } from './protobuf-pod-watch.ts';
import { updateTriggers } from '../router/index.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const BASELINE = process.env.BENCH_WATCH_BASELINE;

/** What the bench needs of a checkout's lib/kube (today's or the baseline's). */
interface KubeModules {
  informer: typeof import('../lib/kube/informer.ts');
  store: typeof import('../lib/kube/object-store.ts');
  budget: typeof import('../lib/contract/json-depth.ts');
  /** The runner's update filter (router/base/predicates.ts), through the checkout's router/index.ts. */
  updateTriggers: typeof updateTriggers;
}

async function load(root: string): Promise<KubeModules> {
  const at = (path: string) => pathToFileURL(resolve(root, path)).href;
  const router = (await import(at('router/index.ts'))) as Partial<typeof import('../router/index.ts')>;
  return {
    informer: await import(at('lib/kube/informer.ts')),
    store: await import(at('lib/kube/object-store.ts')),
    budget: await import(at('lib/contract/json-depth.ts')),
    // A checkout from before router/index.ts exported it: its own filter, so a baseline keeps its predicates.
    updateTriggers: router.updateTriggers ?? ((await import(at('router/base/predicates.ts'))) as { updateTriggers: typeof updateTriggers }).updateTriggers,
  };
}

const full = recordedPodWatch(EVENTS);
const metadata = recordedPodWatch(EVENTS, true);
const protobuf = protobufWatchFrames(metadata.lines);
interface Stream {
  chunks: Buffer[];
  objectEvents: number;
  metadataOnly: boolean;
  /** The stream's Content-Type; JSON when not said. A baseline checkout from before protobuf does not read it. */
  contentType?: string;
}
const PROTOBUF = 'application/vnd.kubernetes.protobuf;stream=watch';
const streams: Record<string, Stream> = {
  'one event per chunk': { chunks: chunked(full.lines, 'per-event'), objectEvents: full.objectEvents, metadataOnly: false },
  '64 KiB chunks': { chunks: chunked(full.lines, 64 * 1024), objectEvents: full.objectEvents, metadataOnly: false },
  'metadata-only, one per chunk': { chunks: chunked(metadata.lines, 'per-event'), objectEvents: metadata.objectEvents, metadataOnly: true },
  'metadata-only, 64 KiB chunks': { chunks: chunked(metadata.lines, 64 * 1024), objectEvents: metadata.objectEvents, metadataOnly: true },
  'protobuf, one per chunk': { chunks: protobuf, objectEvents: metadata.objectEvents, metadataOnly: true, contentType: PROTOBUF },
  'protobuf, 64 KiB chunks': { chunks: chunkBytes(Buffer.concat(protobuf), 64 * 1024), objectEvents: metadata.objectEvents, metadataOnly: true, contentType: PROTOBUF },
};

/** CPU microseconds per object event: list (empty), then the recorded watch, through the router's handlers. */
async function replay(kube: KubeModules, { chunks, objectEvents, metadataOnly, contentType = 'application/json' }: Stream): Promise<number> {
  let delivered = 0;
  let done: () => void = () => {};
  const all = new Promise<void>((r) => (done = r));
  const client = {
    request: async () => ({ items: [], metadata: { resourceVersion: '1000' } }),
    requestText: async () => JSON.stringify({ items: [], metadata: { resourceVersion: '1000' } }),
    // A metadata-only list (protobuf first since lib/kube/protobuf-list.ts), answered in JSON here: empty either way.
    requestBytes: async () => ({ bytes: Buffer.from(JSON.stringify({ items: [], metadata: { resourceVersion: '1000' } })), contentType: 'application/json' }),
    stream: async () => Readable.from(chunks, { objectMode: false }),
    streamResponse: async () => ({ body: Readable.from(chunks, { objectMode: false }), contentType }),
  };
  const informer = new kube.informer.Informer<KubernetesObject>({
    client: client as never,
    resource: { group: '', version: 'v1', apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true },
    metadataOnly,
    // The recorded stream is a watch after a list (WatchList, the default since, would wait for its end bookmark).
    watchList: false,
    transform: kube.informer.stripManagedFields,
    maxValues: kube.budget.DEFAULT_MAX_OBJECT_VALUES,
    indexers: { controllerUid: kube.store.controllerUidOf, uid: (o) => (o.metadata?.uid ? [o.metadata.uid] : []), namespace: kube.store.namespaceOf },
    backoff: { baseMs: 60_000, maxMs: 60_000, jitter: 0 },
  });
  // As router/intake subscribes: the registry's metrics (events, cached objects) and a runner's enqueue.
  let counted = 0;
  let size = 0;
  const seen = () => {
    counted += 1;
    if (++delivered === objectEvents) done();
  };
  informer.on('add', seen);
  informer.on('update', seen);
  informer.on('delete', seen);
  informer.on('add', () => (size = informer.store.size));
  informer.on('delete', () => (size = informer.store.size));
  informer.on('add', (o) => void o.metadata?.labels);
  const loop = { ignoreStatusChanges: false, metadataOnly };
  informer.on('update', (o, previous) => void kube.updateTriggers(loop, previous, o));
  const before = process.cpuUsage();
  informer.start();
  await all;
  const used = process.cpuUsage(before);
  await informer.stop();
  if (counted !== objectEvents || size === 0) throw new Error(`delivered ${counted} of ${objectEvents} events`);
  return (used.user + used.system) / objectEvents;
}

const today = await load(resolve(import.meta.dirname, '..'));
const variants: Record<string, KubeModules> = { today, ...(BASELINE ? { baseline: await load(BASELINE) } : {}) };
const bytesEach = (lines: string[]) => (lines.reduce((n, l) => n + l.length + 1, 0) / lines.length).toFixed(0);
console.log(`[bench] ${full.objectEvents} pod events (${full.lines.length} lines, ${bytesEach(full.lines)} bytes each; metadata-only ${bytesEach(metadata.lines)}), ${ROUNDS} rounds; ${machineLoad()}`);
const perEvent: Record<string, number> = {};
for (const [streamName, stream] of Object.entries(streams)) {
  const figures = await alternatingRounds(stream.contentType ? { today } : variants, ROUNDS, (kube) => replay(kube, stream));
  perEvent[streamName] = mean(figures.today!);
  const row = Object.entries(figures).map(([name, xs]) => `${name} ${mean(xs).toFixed(1)} us/event`);
  const ratio = figures.baseline ? `; today / baseline ${(mean(figures.today!) / mean(figures.baseline)).toFixed(2)}x` : '';
  console.log(`${streamName.padEnd(30)} ${row.join(', ')}${ratio}`);
}
const ratio = (a: string, b: string) => (perEvent[a]! / perEvent[b]!).toFixed(2);
console.log(`metadata-only, protobuf / JSON: ${ratio('protobuf, one per chunk', 'metadata-only, one per chunk')}x one event per chunk, ${ratio('protobuf, 64 KiB chunks', 'metadata-only, 64 KiB chunks')}x in 64 KiB chunks (today's tree)`);
console.log(`[bench] end; ${machineLoad()}`);
