// bench:router's Node floor: the pod-name-label work done on Node's own HTTP/2 client and nothing else (no cache,
// queue, limiter, function, metrics or logs): a lower bound of what any Node controller pays per pod, set beside
// Go's to tell how much of kubeloop's CPU per pod is Node's and how much its own. Run by bench/router-vs-go.ts.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import { startHeapSampling } from './heap-sampling.ts';
import { CONTRACT_API_VERSION, type JsonPatchOperation, type KubeObject, type ReconcileRequest } from '../lib/contract/types.ts';

/** KUBELOOP_BENCH_FLOOR: where and what to label, and the cluster's TLS material (PEM). */
export interface FloorConfig {
  server: string;
  ca?: string;
  cert?: string;
  key?: string;
  headers?: Record<string, string>;
  namespace: string;
  annotation: string;
  label: string;
  /** PATCHes in flight at once (controller-runtime's workers, the Loop's maxConcurrency). */
  workers: number;
  /**
   * The side `node-floor-hop`: each pod's patch is asked of the pod-name-label function at this URL, one plain JSON
   * POST per pod over a keep-alive node:http agent, rather than decided here: the floor plus the function hop alone.
   */
  functionUrl?: string;
}

export interface PodMeta {
  name: string;
  namespace?: string;
  uid?: string;
  managedFields?: unknown;
  resourceVersion?: string;
  deletionTimestamp?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
}

const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const MERGE_PATCH = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const RETRY_AFTER_MS = 100;

/** Whether the pod's label is not what its annotation asks for: the baseline controller's decision. */
export function needsPatch(pod: PodMeta, annotation: string, label: string): boolean {
  if (pod.deletionTimestamp) return false;
  const wanted = pod.annotations?.[annotation] === 'true';
  const current = pod.labels?.[label];
  if (wanted) return current !== pod.name && pod.name.length <= 63;
  return current !== undefined;
}

/** The merge patch that makes the label match the annotation. */
export function labelPatch(pod: PodMeta, annotation: string, label: string): string {
  const wanted = pod.annotations?.[annotation] === 'true';
  return JSON.stringify({ metadata: { labels: { [label]: wanted ? pod.name : null } } });
}

/** The ReconcileRequest the router would send for the pod (its managedFields dropped, as the router's cache does). */
export function reconcileRequest(pod: PodMeta, now: Date): ReconcileRequest & { reconcileId: string } {
  const { managedFields: _dropped, ...metadata } = pod;
  return {
    apiVersion: CONTRACT_API_VERSION,
    kind: 'ReconcileRequest',
    loop: 'pod-name-label',
    reconcileId: randomUUID(),
    trigger: { type: 'ADDED' },
    // The metadata as the watch's JSON has it (its timestamps strings, not the client's Dates), as the router sends it.
    object: { apiVersion: 'v1', kind: 'Pod', metadata } as unknown as KubeObject,
    children: {},
    now: now.toISOString(),
  };
}

/**
 * The JSON patch the function's reply asks for, without its resourceVersion tests (the router checks those in its
 * cache and sends none), or undefined when it asks for no patch; a reply that is not a ReconcileResponse throws.
 */
export function replyPatch(text: string): JsonPatchOperation[] | undefined {
  const reply = JSON.parse(text) as { actions?: Array<{ op?: string; patch?: JsonPatchOperation[] }> };
  if (!Array.isArray(reply.actions)) throw new Error(`the function's reply has no actions: ${text.slice(0, 200)}`);
  const patch = reply.actions.find((action) => action.op === 'patch')?.patch;
  return patch?.filter((op) => !(op.op === 'test' && op.path === '/metadata/resourceVersion'));
}

/** A metadata-only list's pods and resourceVersion; an empty list's items come as null. */
export function listedPods(text: string): { resourceVersion: string; items: PodMeta[] } {
  const list = JSON.parse(text) as { metadata: { resourceVersion: string }; items: Array<{ metadata: PodMeta }> | null };
  return { resourceVersion: list.metadata.resourceVersion, items: (list.items ?? []).map((item) => item.metadata) };
}

async function main(config: FloorConfig): Promise<void> {
  const session = http2.connect(config.server, { ca: config.ca, cert: config.cert, key: config.key });
  session.on('error', (error) => fail(`the API server's connection failed: ${error.message}`));
  const base = `/api/v1/namespaces/${encodeURIComponent(config.namespace)}/pods`;
  const latest = new Map<string, PodMeta>();
  const queued = new Set<string>();
  const queue: string[] = [];
  let inFlight = 0;

  const send = (method: string, path: string, accept: string, body?: string, contentType?: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const stream = session.request({ ':method': method, ':path': path, accept, ...config.headers, ...(contentType ? { 'content-type': contentType } : {}) });
      let status = 0;
      let text = '';
      stream.setEncoding('utf8');
      stream.on('response', (headers) => (status = Number(headers[':status'])));
      stream.on('data', (chunk: string) => (text += chunk));
      stream.on('end', () => resolve({ status, text }));
      stream.on('error', reject);
      stream.end(body);
    });

  // The function hop (node-floor-hop only): one connection per worker, kept open as the router's client keeps its own.
  const hop = config.functionUrl ? new http.Agent({ keepAlive: true, maxSockets: config.workers }) : undefined;
  const ask = (pod: PodMeta) =>
    new Promise<JsonPatchOperation[] | undefined>((resolve, reject) => {
      const request = http.request(config.functionUrl!, { method: 'POST', agent: hop, headers: { 'content-type': 'application/json' } }, (reply) => {
        let text = '';
        reply.setEncoding('utf8');
        reply.on('data', (chunk: string) => (text += chunk));
        reply.on('end', () => {
          if (reply.statusCode !== 200) return reject(new Error(`the function answered ${reply.statusCode}: ${text.slice(0, 200)}`));
          // A reply that is no ReconcileResponse fails this pod's attempt (sent again), not the whole floor.
          try {
            resolve(replyPatch(text));
          } catch (error) {
            reject(error as Error);
          }
        });
      });
      request.on('error', reject);
      request.end(JSON.stringify(reconcileRequest(pod, new Date())));
    });
  /** The pod's PATCH: the function's JSON patch (node-floor-hop), or the floor's own merge patch. */
  const patch = async (pod: PodMeta): Promise<{ status: number; text: string }> => {
    const path = `${base}/${encodeURIComponent(pod.name)}`;
    if (!hop) return send('PATCH', path, METADATA, labelPatch(pod, config.annotation, config.label), MERGE_PATCH);
    const operations = await ask(pod);
    return operations ? send('PATCH', path, METADATA, JSON.stringify(operations), JSON_PATCH) : { status: 200, text: '' };
  };

  const patchNext = (): void => {
    while (inFlight < config.workers && queue.length > 0) {
      const name = queue.shift()!;
      const pod = latest.get(name);
      if (!pod || !needsPatch(pod, config.annotation, config.label)) {
        queued.delete(name);
        continue;
      }
      inFlight += 1;
      void patch(pod).then(
        ({ status, text }) => settle(name, status, text),
        (error: Error) => settle(name, 0, error.message),
      );
    }
  };
  const settle = (name: string, status: number, text: string): void => {
    inFlight -= 1;
    queued.delete(name);
    // Status 0: the request failed before an answer (the function's or the API server's connection).
    if (status === 0 || (status >= 300 && status !== 404)) {
      process.stderr.write(`${JSON.stringify({ patchFailed: name, status, text: text.slice(0, 200) })}\n`);
      // Sent again after a pause, not at once: a refusal that lasts (RBAC, a webhook) must not spin.
      setTimeout(() => {
        offer(latest.get(name));
        patchNext();
      }, RETRY_AFTER_MS);
    }
    patchNext();
  };
  const offer = (pod: PodMeta | undefined): void => {
    if (!pod || queued.has(pod.name) || !needsPatch(pod, config.annotation, config.label)) return;
    queued.add(pod.name);
    queue.push(pod.name);
  };
  const seen = (meta: PodMeta): void => {
    latest.set(meta.name, meta);
    offer(meta);
  };

  const list = await send('GET', base, METADATA_LIST);
  if (list.status !== 200) fail(`listing the pods answered ${list.status}: ${list.text.slice(0, 200)}`);
  const pods = listedPods(list.text);
  for (const pod of pods.items) seen(pod);
  watch(session, `${base}?watch=1&allowWatchBookmarks=true&resourceVersion=${pods.resourceVersion}`, config.headers, (type, meta) => {
    if (type === 'DELETED') latest.delete(meta.name);
    else seen(meta);
    patchNext();
  });
  // Synced: the bench reads the floor's start-up CPU here, as it does at controller-runtime's "Starting workers".
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  patchNext();
}

/** A watch's JSON lines, each ADDED, MODIFIED or DELETED object told to `on`; an ERROR or its end fails the run. */
function watch(session: http2.ClientHttp2Session, path: string, headers: Record<string, string> | undefined, on: (type: string, meta: PodMeta) => void): void {
  const stream = session.request({ ':method': 'GET', ':path': path, accept: METADATA, ...headers });
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      if (line === '') continue;
      const event = JSON.parse(line) as { type: string; object: { metadata: PodMeta } };
      if (event.type === 'ERROR') fail(`the watch failed: ${line.slice(0, 200)}`);
      if (event.type !== 'BOOKMARK') on(event.type, event.object.metadata);
    }
  });
  stream.on('end', () => fail('the watch ended'));
  stream.on('error', (error) => fail(`the watch failed: ${error.message}`));
}

function fail(message: string): never {
  process.stderr.write(`node floor: ${message}\n`);
  process.exit(1);
}

if (process.env.KUBELOOP_BENCH_FLOOR) {
  const heap = startHeapSampling('node-floor');
  process.once('SIGTERM', () => {
    if (!heap) process.exit(0);
    heap.stop().then((file) => process.stderr.write(`node floor heap profile: ${file}\n`), () => undefined).finally(() => process.exit(0));
  });
  main(JSON.parse(process.env.KUBELOOP_BENCH_FLOOR) as FloorConfig).catch((error: Error) => fail(error.message));
}
