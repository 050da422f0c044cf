// `kubeloop console`'s server: the static UI and the JSON it reads, everything fetched from the API server
// with the caller's own credentials (so the page shows exactly what the caller may see), optionally an OTLP
// receiver for kubeloop dev's traces. Every request must name this server in Host and, from a browser, come
// from its own page (request-guard.ts); it listens on loopback unless told otherwise.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ResourceDiscovery, UnknownKindError } from '../../lib/kube/discovery.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { createServer, listen } from '../../lib/server/create-server.ts';
import { historyRequest, type ObjectHistory } from '../../router/index.ts';
import { hookHistoryPath, type HookHistory } from '../../webhooks/index.ts';
import { buildTimeline } from './history-timeline.ts';
import { decodeOtlpJson, decodeOtlpProtobuf, OtlpDecodeError } from './otlp-decode.ts';
import { listConsoleObjects, overviewRows, type Overview, type OverviewRow } from './overview.ts';
import { checkRequest, ownHosts } from './request-guard.ts';
import { describeSource, readMetrics, type MetricsSource } from './router-metrics.ts';
import { admissionsOf, reconcilesOf, type TraceSource } from './trace-sources.ts';
import type { TraceSummary } from './trace-model.ts';
import type { TraceStore } from './trace-store.ts';
import type { ConsoleAssets } from './ui-assets.ts';

export interface ConsoleOptions {
  /** The caller's client (their kubeconfig): every read is made as them. */
  client: KubeClient;
  logger: Logger;
  assets: ConsoleAssets;
  /** 127.0.0.1 by default: only this machine reaches the user's credentials. */
  address?: string;
  port?: number;
  /** Namespaces to list namespaced kinds in when the caller may not list them cluster-wide. */
  namespaces?: readonly string[];
  routerMetrics?: MetricsSource;
  traces?: TraceSource;
  /** Spans POSTed to /v1/traces (OTLP/HTTP, protobuf or JSON) are kept here. */
  traceStore?: TraceStore;
}

export interface RunningConsole {
  url: string;
  close(): Promise<void>;
}

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** A list or history the caller may not read: the code and the API server's message, for the page to show. */
const unavailable = (error: unknown) => (isApiError(error) && [401, 403, 404].includes(error.statusCode) ? { code: error.statusCode, message: error.message } : undefined);

export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const { client, logger } = options;
  const address = options.address ?? '127.0.0.1';
  const discovery = new ResourceDiscovery(client);
  const namespaces = options.namespaces ?? [];
  const { app } = createServer({ logger, serveMetrics: false, bodyLimitBytes: 16 * 1024 * 1024 });
  let hosts = new Set<string>();
  app.addHook('onRequest', async (request, reply) => {
    const verdict = checkRequest({ host: request.headers.host, origin: request.headers.origin, 'sec-fetch-site': request.headers['sec-fetch-site'] as string | undefined }, hosts);
    if (!verdict.ok) {
      request.log.warn({ host: request.headers.host, origin: request.headers.origin }, 'console request refused');
      return reply.code(403).send({ statusCode: 403, code: 'Forbidden', message: verdict.reason });
    }
    reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer').header('cache-control', 'no-store');
  });

  for (const [path, asset] of options.assets) {
    app.get(path, async (_request, reply) => reply.header('content-type', asset.contentType).header('content-security-policy', CSP).header('x-frame-options', 'DENY').send(asset.body));
  }

  // The JSON API in a scope of its own, with its own error handler (createServer's stays for the rest).
  await app.register(async (api) => {
    // What fails here is nearly always the API server or a trace backend not answering: say which and why,
    // rather than an opaque internal error id.
    api.setErrorHandler((error: FastifyError, request, reply) => {
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) return reply.code(error.statusCode).send({ statusCode: error.statusCode, code: error.code, message: error.message });
      request.log.warn({ err: error }, 'console request failed');
      return reply.code(502).send({ statusCode: 502, code: 'BadGateway', message: `${client.server} or a trace backend did not answer as expected: ${error.message}` });
    });

    const overview = async (): Promise<Overview> => {
      const { listed, refused } = await listConsoleObjects(client, namespaces);
      let metrics: Overview['metrics'] = { unavailable: 'no router metrics configured (--router-metrics)' };
      let samples;
      if (options.routerMetrics) {
        try {
          samples = await readMetrics(options.routerMetrics, client);
          metrics = { source: describeSource(options.routerMetrics) };
        } catch (error) {
          metrics = { source: describeSource(options.routerMetrics), unavailable: (error as Error).message };
        }
      }
      return { rows: overviewRows(listed, samples), refused, metrics };
    };
    api.get('/api/overview', overview);

    type LoopQuery = { Querystring: { id?: string } };
    api.get('/api/loop', async (request: FastifyRequest<LoopQuery>, reply: FastifyReply) => {
      const id = request.query.id ?? '';
      const { rows } = await overview();
      const row = rows.find((r) => r.id === id && (r.kind === 'Loop' || r.kind === 'ClusterLoop'));
      if (!row) return reply.code(404).send({ statusCode: 404, code: 'NotFound', message: `no Loop ${id} that you may list` });
      const objects: Array<{ namespace?: string; name: string }> = [];
      let objectsUnavailable: { code: number; message: string } | undefined;
      if (row.for) {
        try {
          const resource = await discovery.resolve(row.for.apiVersion, row.for.kind);
          const prefix = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
          // The Loop's own namespace, else the namespaces it names, else all; only the primaries its selector picks.
          const where = !resource.namespaced ? [undefined] : row.namespace ? [row.namespace] : (row.scope?.namespaces ?? [undefined]);
          for (const namespace of where) {
            const scope = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
            const list = await client.request<{ items: Array<{ metadata: { name: string; namespace?: string } }> }>({ path: `${prefix}${scope}/${resource.plural}`, query: { limit: 200, labelSelector: row.scope?.labelSelector } });
            objects.push(...list.items.map((i) => ({ name: i.metadata.name, ...(i.metadata.namespace ? { namespace: i.metadata.namespace } : {}) })));
          }
        } catch (error) {
          if (error instanceof UnknownKindError) objectsUnavailable = { code: 404, message: error.message };
          else objectsUnavailable = unavailable(error) ?? { code: 500, message: (error as Error).message };
        }
      }
      let failures;
      let failuresUnavailable: string | undefined;
      try {
        failures = options.traces ? await options.traces.recent(reconcilesOf(id), true, 20) : undefined;
      } catch (error) {
        failuresUnavailable = (error as Error).message;
      }
      return { row, objects, ...(objectsUnavailable ? { objectsUnavailable } : {}), failures: failures ?? [], traces: options.traces?.describe ?? null, ...(failuresUnavailable ? { failuresUnavailable } : {}) };
    });

    /** The gateway's record of the hook's admissions (admissions.kubeloop.dev), as the caller may read it. */
    const readHookHistory = async (row: OverviewRow): Promise<{ history?: HookHistory; historyUnavailable?: { code: number; message: string } }> => {
      try {
        return { history: await client.request<HookHistory>({ path: hookHistoryPath(row.namespace, row.name) }) };
      } catch (error) {
        const refused = unavailable(error) ?? (isApiError(error) && error.statusCode === 503 ? { code: 503, message: `the admission history API does not answer: ${error.message}` } : undefined);
        if (refused) return { historyUnavailable: refused };
        throw error;
      }
    };
    /** The hook's recent admission traces (the gateway's `admit <hook>` roots), when a trace backend is configured. */
    const recentAdmissions = async (id: string): Promise<{ admissions: TraceSummary[]; admissionsUnavailable?: string }> => {
      try {
        return { admissions: options.traces ? await options.traces.recent(admissionsOf(id), false, 30) : [] };
      } catch (error) {
        return { admissions: [], admissionsUnavailable: (error as Error).message };
      }
    };

    // An AdmissionHook, its admission history and its recent admission traces (their traces: the gateway's `admit <hook>` roots).
    api.get('/api/hook', async (request: FastifyRequest<LoopQuery>, reply: FastifyReply) => {
      const id = request.query.id ?? '';
      const { rows } = await overview();
      const row = rows.find((r) => r.id === id && (r.kind === 'AdmissionHook' || r.kind === 'ClusterAdmissionHook'));
      if (!row) return reply.code(404).send({ statusCode: 404, code: 'NotFound', message: `no AdmissionHook ${id} that you may list` });
      const [history, traced] = await Promise.all([readHookHistory(row), recentAdmissions(id)]);
      return { row, ...history, ...traced, traces: options.traces?.describe ?? null };
    });

    type HistoryQuery = { Querystring: { loop?: string; namespace?: string; name?: string } };
    api.get('/api/history', async (request: FastifyRequest<HistoryQuery>, reply: FastifyReply) => {
      const { loop, namespace, name } = request.query;
      if (!loop || !name) return reply.code(400).send({ statusCode: 400, code: 'BadRequest', message: 'loop and name are required (namespace too for a namespaced object)' });
      try {
        const history = await client.request<ObjectHistory & { owner?: string }>(historyRequest(loop, namespace || undefined, name));
        return { timeline: buildTimeline(history) };
      } catch (error) {
        // The history API answers the same 403 for "no such Loop" and "not yours": both mean "not available to you".
        const refused = unavailable(error);
        if (refused) return { unavailable: refused };
        throw error;
      }
    });

    type TraceParams = { Params: { id: string } };
    api.get('/api/traces/:id', async (request: FastifyRequest<TraceParams>, reply: FastifyReply) => {
      const id = request.params.id.toLowerCase();
      if (!/^[0-9a-f]{32}$/.test(id)) return reply.code(400).send({ statusCode: 400, code: 'BadRequest', message: `"${request.params.id}" is not a trace id (32 hex digits)` });
      if (!options.traces) return reply.code(404).send({ statusCode: 404, code: 'NotFound', message: 'no trace backend: start the console with --jaeger URL, or --receive-traces (kubeloop dev does)' });
      const spans = await options.traces.trace(id);
      if (!spans) return reply.code(404).send({ statusCode: 404, code: 'NotFound', message: `trace ${id} is not in ${options.traces.describe} (not sampled, not exported yet, or dropped)` });
      return { traceId: id, source: options.traces.describe, spans };
    });

    const store = options.traceStore;
    if (store) {
      api.addContentTypeParser(['application/x-protobuf', 'application/protobuf'], { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
      api.post('/v1/traces', async (request, reply) => {
        try {
          const spans = Buffer.isBuffer(request.body) ? decodeOtlpProtobuf(request.body) : decodeOtlpJson(request.body);
          store.add(spans);
        } catch (error) {
          if (error instanceof OtlpDecodeError) return reply.code(400).send({ statusCode: 400, code: 'BadRequest', message: `not an OTLP trace export: ${error.message}` });
          throw error;
        }
        // An empty ExportTraceServiceResponse: full success.
        return Buffer.isBuffer(request.body) ? reply.header('content-type', 'application/x-protobuf').send(Buffer.alloc(0)) : reply.send({});
      });
    }
  });

  const url = await listen(app, { port: options.port ?? 0, host: address });
  hosts = ownHosts(address, Number(new URL(url).port));
  return { url, close: () => app.close() };
}
