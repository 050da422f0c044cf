// The history API: the router's flight recorder served as an aggregated API (APIService
// v1alpha1.history.kubeloop.dev), so `kubeloop history` reads it through the API server with the caller's
// own identity. Only the API server's front proxy may call (mutual TLS, requestheader CA); the caller it
// names may read an object's history when a SubjectAccessReview says they may `get` the object. Whether a
// Loop runs, and what it reconciles, is told only to who may `get` that Loop (loop-disclosure.ts).
import type { TLSSocket } from 'node:tls';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { KindRef } from '../../api/meta.ts';
import { reviewUserAccess, type UserInfo } from '../../lib/kube/access-review.ts';
import { ResourceDiscovery, UnknownKindError } from '../../lib/kube/discovery.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import type { KubeloopServer } from '../../lib/server/create-server.ts';
import { createAggregatedApiServer } from '../../lib/server/aggregated-api-server.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import type { FlightRecorder } from '../reconcile/flight-recorder.ts';
import { requestScopes, servedEntries, type RequestVerdict } from './request-access.ts';
import { loopAttributes, notShown } from './loop-disclosure.ts';
import { userFromHeaders } from '../../lib/server/front-proxy.ts';
import { FORWARDED_BY_HEADER, forwardToReplica, presentedOwnCertificate, userHeaders, type PeerResolver } from './peer-forward.ts';
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  failure,
  HISTORY_API_VERSION,
  HISTORY_GROUP,
  HISTORY_RESOURCE,
  OBJECT_HISTORY_KIND,
  type ObjectHistory,
  type Status,
} from './history-documents.ts';

/** What the history API reads of the router: its running Loops and its recorder. */
export interface HistorySource {
  identity: string;
  /** The Loops running on this replica (none on a standby): identity (`<namespace>/<name>` or `<name>`) and primary kind. */
  loops(): Array<{ id: string; for: KindRef }>;
  history: FlightRecorder;
  /**
   * With sharding: the member that owns the key, when it is not this one. Its history is kept there; this
   * replica answers with what it holds and names the owner (docs/observability.md, "Sharded routers").
   */
  ownerOf?(loop: string, key: string): Promise<string | undefined> | string | undefined;
}

/** The source a started router offers (its running Loops, its recorder and, with sharding, the key's owner). */
export function historySource(router: { identity: string; loops(): Array<{ loop: { id: string; for: KindRef } }>; history: FlightRecorder; historyOwner(loop: string, key: string): Promise<string | undefined> }): HistorySource {
  return {
    identity: router.identity,
    loops: () => router.loops().map((runner) => ({ id: runner.loop.id, for: runner.loop.for })),
    history: router.history,
    ownerOf: (loop, key) => router.historyOwner(loop, key),
  };
}

export interface HistoryApiOptions {
  source: HistorySource;
  /** The router's own client: reads the requestheader ConfigMap, asks SubjectAccessReviews, resolves kinds. */
  client: KubeClient;
  logger: Logger;
  port: number;
  host?: string;
  /** The serving certificate; the APIService's caBundle (or cert-manager's injection) must trust it. */
  tls: { certPem: string; keyPem: string };
  /** Where another replica serves its history API: a request for a key it holds is forwarded there. None: answered here. */
  peers?: PeerResolver;
  /** How often the requestheader CA is read again (the API server may rotate it); 5 minutes by default. */
  refreshMs?: number;
}

export interface HistoryApi {
  url: string;
  server: KubeloopServer;
  close(): Promise<void>;
}

const sendStatus = (reply: FastifyReply, status: Status) => reply.code(status.code).send(status);

export async function startHistoryApi(options: HistoryApiOptions): Promise<HistoryApi> {
  const { client, source } = options;
  const discovery = new ResourceDiscovery(client);
  const forwarded = new WeakSet<FastifyRequest>();
  const api = await createAggregatedApiServer({
    client,
    logger: options.logger,
    tls: options.tls,
    status: (code, reason, message) => failure(code, reason, message),
    ...(options.refreshMs ? { refreshMs: options.refreshMs } : {}),
    // Another replica passing on what the front proxy told it: it holds our serving key, so it vouches for the caller.
    vouchedFor: (request, config) => {
      if (request.headers[FORWARDED_BY_HEADER] === undefined || !presentedOwnCertificate(request.raw.socket as TLSSocket, options.tls.certPem)) return undefined;
      forwarded.add(request);
      return { user: userFromHeaders(request.raw.headersDistinct, config) };
    },
  });
  const { server } = api;
  const { app } = server;

  // Discovery: what kubectl and the API server's aggregated discovery read.
  app.get('/apis', async () => apiGroupList());
  app.get(`/apis/${HISTORY_GROUP}`, async () => apiGroup());
  app.get(`/apis/${HISTORY_API_VERSION}`, async () => apiResourceList());

  type Params = { namespace?: string; name: string };
  type Query = { loop?: string };
  const handler = async (request: FastifyRequest<{ Params: Params; Querystring: Query }>, reply: FastifyReply) => {
    const { namespace, name } = request.params;
    const loopId = request.query.loop;
    const user = api.userOf(request);
    if (!user) return sendStatus(reply, failure(401, 'Unauthorized', 'the API server named no user for this request'));
    if (!loopId) return sendStatus(reply, failure(400, 'BadRequest', 'the query parameter loop (the Loop whose reconciles to show) is required', name));
    const key = objectKey({ namespace, name });
    const loopTarget = loopAttributes(loopId);
    if (!loopTarget) return sendStatus(reply, failure(400, 'BadRequest', `loop "${loopId}" is not a Loop's identity: <namespace>/<name> for a Loop, <name> for a ClusterLoop`, name));
    // Authorization first: who may not get the Loop learns nothing of it (whether it runs, what it reconciles)
    // from this answer; every refusal below is then the same 403, whichever check failed.
    const seesLoop = (await reviewUserAccess(client, user, loopTarget)).allowed;
    const hidden = () => sendStatus(reply, notShown(user.user, loopId, namespace, name));
    const owner = await source.ownerOf?.(loopId, key);
    if (owner && options.peers && !forwarded.has(request)) {
      // The replica that holds the history decides, its own SubjectAccessReview included.
      const peer = await options.peers(owner).catch((error: unknown) => {
        request.log.warn({ err: error, owner }, 'could not find the replica that holds the history; answering from this one');
        return undefined;
      });
      if (peer) {
        try {
          const answer = await forwardToReplica(peer, options.tls, { path: request.url, headers: { ...userHeaders(user, api.requestHeaderConfig()), [FORWARDED_BY_HEADER]: source.identity } });
          return reply.code(answer.status).header('content-type', 'application/json').send(answer.body);
        } catch (error) {
          const who = seesLoop ? `router ${owner}, which holds the history of ${key},` : 'the router replica that holds this history';
          return sendStatus(reply, failure(503, 'ServiceUnavailable', `${who} did not answer: ${(error as Error).message}`, name));
        }
      }
    }
    const loop = source.loops().find((l) => l.id === loopId);
    if (!loop && !seesLoop) return hidden();
    if (!loop) {
      const running = source.loops().map((l) => l.id);
      const message = running.length === 0 ? `no Loop runs on router ${source.identity} (a standby, or not started yet)` : `no Loop ${loopId} runs on router ${source.identity}`;
      return sendStatus(reply, failure(404, 'NotFound', message, name));
    }
    let resource;
    try {
      resource = await discovery.resolve(loop.for.apiVersion, loop.for.kind);
    } catch (error) {
      if (error instanceof UnknownKindError) return seesLoop ? sendStatus(reply, failure(404, 'NotFound', error.message, name)) : hidden();
      throw error;
    }
    if (resource.namespaced !== (namespace !== undefined)) {
      if (!seesLoop) return hidden();
      const shape = resource.namespaced ? `<namespace>/${name}` : name;
      return sendStatus(reply, failure(400, 'BadRequest', `Loop ${loopId} reconciles ${resource.kind} (${resource.namespaced ? 'namespaced' : 'cluster-scoped'}): name the object as ${shape}`, name));
    }
    const attributes = { verb: 'get', group: resource.group, version: resource.version, resource: resource.plural, name, ...(namespace ? { namespace } : {}) };
    const verdict = await reviewUserAccess(client, user, attributes);
    if (!verdict.allowed) {
      if (!seesLoop) {
        request.log.info({ user: user.user, loop: loopId, object: key }, 'history refused: the user may get neither the Loop nor the object');
        return hidden();
      }
      const what = `${resource.plural}${resource.group ? `.${resource.group}` : ''} "${name}"${namespace ? ` in namespace "${namespace}"` : ''}`;
      request.log.info({ user: user.user, loop: loopId, object: what }, 'history refused: the user may not get the object');
      return sendStatus(reply, failure(403, 'Forbidden', `user "${user.user}" cannot get ${what}: an object's history is shown only to who may get the object (${verdict.message})`, name));
    }
    const entries = source.history.history(loopId, key);
    // An empty history would still tell who may not get the Loop that it runs and reconciles this kind.
    if (entries.length === 0 && !seesLoop) return hidden();
    const kept = entries.findLast((e) => e.request !== undefined)?.request;
    const shown = kept ? await requestVerdict(kept, user, attributes) : undefined;
    const body: ObjectHistory & { owner?: string } = {
      apiVersion: HISTORY_API_VERSION,
      kind: OBJECT_HISTORY_KIND,
      metadata: { name, ...(namespace ? { namespace } : {}) },
      loop: loopId,
      object: { apiVersion: resource.apiVersion, kind: resource.kind, name, ...(namespace ? { namespace } : {}) },
      servedBy: source.identity,
      entries: servedEntries(entries, shown),
    };
    if (owner) body.owner = owner;
    return reply.send(body);
  };
  /** The latest request is shown to a user who may get every kind it holds where it holds them (the primary's check already passed). */
  const requestVerdict = async (request: ReconcileRequest, user: UserInfo, primary: { group: string; resource: string; namespace?: string }): Promise<RequestVerdict> => {
    for (const scope of requestScopes(request)) {
      const resource = await discovery.resolve(scope.apiVersion, scope.kind).catch(() => undefined);
      if (!resource) return { shown: false, why: `it holds ${scope.kind} objects the API server no longer serves` };
      if (resource.group === primary.group && resource.plural === primary.resource && scope.namespace === primary.namespace) continue;
      const check = { verb: 'get', group: resource.group, resource: resource.plural, ...(scope.namespace ? { namespace: scope.namespace } : {}) };
      const verdict = await reviewUserAccess(client, user, check);
      if (!verdict.allowed) return { shown: false, why: `it holds ${resource.plural}${resource.group ? `.${resource.group}` : ''} ${scope.namespace ? `in namespace ${scope.namespace}` : 'cluster-wide'}, which user "${user.user}" may not get` };
    }
    return { shown: true };
  };

  app.get(`/apis/${HISTORY_API_VERSION}/namespaces/:namespace/${HISTORY_RESOURCE}/:name`, handler);
  app.get(`/apis/${HISTORY_API_VERSION}/${HISTORY_RESOURCE}/:name`, handler);

  const url = await api.listen({ port: options.port, host: options.host ?? '0.0.0.0' });
  return { url, server, close: () => api.close() };
}
