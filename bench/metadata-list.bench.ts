// npm run bench:metadata-list: CPU per object of a metadata-only informer's list (lib/kube/informer.ts, with the
// transform and indexers router/intake gives it), its pages answered in JSON and in protobuf (what it asks for) in
// alternating rounds of one run, replayed from memory: no cluster. The pods are recorded-pod-watch.ts's, labelled.
import { Readable } from 'node:stream';
import type { KubernetesObject } from '@kubernetes/client-node';
import { Informer, stripManagedFields } from '../lib/kube/informer.ts';
import { controllerUidOf, namespaceOf } from '../lib/kube/object-store.ts';
import { DEFAULT_MAX_OBJECT_VALUES } from '../lib/contract/json-depth.ts';
import type { KubeRequest } from '../lib/kube/kube-client.ts';
import { partialObjectMetadataList } from '../test/support/protobuf-watch-frames.ts';
import { alternatingRounds, mean } from './alternating-rounds.ts';
import { machineLoad } from './process-figures.ts';
import { recordedPod } from './recorded-pod-watch.ts';
import { protobufMeta, type RecordedMeta } from './protobuf-pod-watch.ts';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 5000);
const PAGE = Number(process.env.BENCH_PAGE_SIZE ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);

/** One list's pages in one encoding, keyed by the continue token that asks for each ('' the first). */
type Pages = Map<string, { bytes: Buffer; contentType: string }>;

function pages(encoding: 'json' | 'protobuf'): Pages {
  const out: Pages = new Map();
  for (let start = 0; start < OBJECTS; start += PAGE) {
    const metas = Array.from({ length: Math.min(PAGE, OBJECTS - start) }, (_, i) => (recordedPod(start + i, 3, 1000 + start + i) as { metadata: RecordedMeta }).metadata);
    const rest = OBJECTS - start - metas.length;
    const list = { resourceVersion: String(1000 + OBJECTS), ...(rest > 0 ? { continue: `page-${start + PAGE}`, remainingItemCount: rest } : {}) };
    const bytes =
      encoding === 'protobuf'
        ? Buffer.from(partialObjectMetadataList(list, metas.map(protobufMeta)))
        : Buffer.from(JSON.stringify({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: list, items: metas.map((metadata) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata })) }));
    out.set(start === 0 ? '' : `page-${start}`, { bytes, contentType: encoding === 'protobuf' ? 'application/vnd.kubernetes.protobuf' : 'application/json' });
  }
  return out;
}

/** CPU microseconds per object from the informer's start to its sync: the list's requests, parse, transform, cache. */
async function listOnce(answers: Pages): Promise<number> {
  const client = {
    serverKey: {},
    requestBytes: async (request: KubeRequest) => answers.get(String(request.query?.continue ?? ''))!,
    // The watch after the list: open and quiet until stop() aborts it.
    streamResponse: async (request: KubeRequest) => {
      const body = new Readable({ read() {} });
      const end = () => body.destroy(request.signal?.reason as Error);
      if (request.signal?.aborted) end();
      else request.signal?.addEventListener('abort', end);
      return { body, contentType: 'application/json' };
    },
  };
  const informer = new Informer<KubernetesObject>({
    client: client as never,
    resource: { group: '', version: 'v1', apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true },
    metadataOnly: true,
    watchList: false,
    pageSize: PAGE,
    transform: stripManagedFields,
    maxValues: DEFAULT_MAX_OBJECT_VALUES,
    indexers: { controllerUid: controllerUidOf, uid: (o) => (o.metadata?.uid ? [o.metadata.uid] : []), namespace: namespaceOf },
  });
  let added = 0;
  informer.on('add', () => void (added += 1));
  const before = process.cpuUsage();
  informer.start();
  await informer.waitForSync();
  const used = process.cpuUsage(before);
  await informer.stop();
  if (added !== OBJECTS || informer.store.size !== OBJECTS) throw new Error(`cached ${informer.store.size} of ${OBJECTS} objects`);
  return (used.user + used.system) / OBJECTS;
}

const variants = { json: pages('json'), protobuf: pages('protobuf') };
const size = (p: Pages) => [...p.values()].reduce((n, page) => n + page.bytes.length, 0) / OBJECTS;
console.log(`[bench] metadata-only list of ${OBJECTS} pods, ${PAGE} a page (JSON ${size(variants.json).toFixed(0)} bytes an object, protobuf ${size(variants.protobuf).toFixed(0)}), ${ROUNDS} rounds; ${machineLoad()}`);
const figures = await alternatingRounds(variants, ROUNDS, listOnce);
for (const [name, xs] of Object.entries(figures)) console.log(`${name.padEnd(9)} ${mean(xs).toFixed(2)} us/object (rounds ${xs.map((x) => x.toFixed(1)).join(' ')})`);
console.log(`protobuf / JSON: ${(mean(figures.protobuf!) / mean(figures.json!)).toFixed(2)}x`);
console.log(`[bench] end; ${machineLoad()}`);
