// The admission history API: the gateway's recorder served as an aggregated API (APIService
// v1alpha1.admissions.kubeloop.dev), so the console reads a hook's admissions through the API server with
// the caller's own identity. Only who may `get` the hook learns anything of it (one and the same 403
// otherwise), and each admission is shown only to who may `get` its object's kind in its namespace.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { reviewUserAccess } from '../../lib/kube/access-review.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { createAggregatedApiServer } from '../../lib/server/aggregated-api-server.ts';
import type { AdmissionHistory } from '../gateway/admission-history.ts';
import { entryScopes, hookAttributes, scopeKey, visibleEntries } from './admission-history-access.ts';
import {
  ADMISSIONS_API_VERSION,
  admissionsDiscovery,
  admissionsFailure,
  HOOK_HISTORY_KIND,
  HOOK_HISTORY_RESOURCE,
  ADMISSIONS_GROUP,
  type AdmissionsStatus,
  type HookHistory,
} from './admission-history-documents.ts';

export interface AdmissionHistoryApiOptions {
  history: AdmissionHistory;
  /** This gateway replica's name (the pod's): said in every answer, since each replica keeps its own admissions. */
  identity: string;
  /** The gateway's own client: reads the requestheader ConfigMap and asks SubjectAccessReviews. */
  client: KubeClient;
  logger: Logger;
  port: number;
  host?: string;
  tls: { certPem: string; keyPem: string };
}

export interface AdmissionHistoryApi {
  url: string;
  close(): Promise<void>;
}

const send = (reply: FastifyReply, status: AdmissionsStatus) => reply.code(status.code).send(status);

export async function startAdmissionHistoryApi(options: AdmissionHistoryApiOptions): Promise<AdmissionHistoryApi> {
  const { client } = options;
  const api = await createAggregatedApiServer({ client, logger: options.logger, tls: options.tls, status: (code, reason, message) => admissionsFailure(code, reason, message) });
  const { app } = api.server;
  app.get('/apis', async () => admissionsDiscovery.groupList());
  app.get(`/apis/${ADMISSIONS_GROUP}`, async () => admissionsDiscovery.group());
  app.get(`/apis/${ADMISSIONS_API_VERSION}`, async () => admissionsDiscovery.resourceList());

  const handler = async (request: FastifyRequest<{ Params: { namespace?: string; name: string } }>, reply: FastifyReply) => {
    const { namespace, name } = request.params;
    const user = api.userOf(request);
    if (!user) return send(reply, admissionsFailure(401, 'Unauthorized', 'the API server named no user for this request'));
    const kind = namespace ? 'AdmissionHook' : 'ClusterAdmissionHook';
    const hook = `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
    // Whether the hook exists or admitted anything is the hook's own data: who may not get it learns neither.
    if (!(await reviewUserAccess(client, user, hookAttributes(namespace, name))).allowed) {
      request.log.info({ user: user.user, hook }, 'admission history refused: the user may not get the hook');
      return send(reply, admissionsFailure(403, 'Forbidden', `user "${user.user}" cannot get the admission history of ${hook}: it is shown to who may get the hook`, name));
    }
    const entries = options.history.history(namespace ? `${namespace}/${name}` : name);
    const allowed = new Set<string>();
    for (const scope of entryScopes(entries)) if ((await reviewUserAccess(client, user, scope)).allowed) allowed.add(scopeKey(scope));
    const { shown, withheld } = visibleEntries(entries, allowed);
    const body: HookHistory = {
      apiVersion: ADMISSIONS_API_VERSION,
      kind: HOOK_HISTORY_KIND,
      metadata: { name, ...(namespace ? { namespace } : {}) },
      hook: { kind, name, ...(namespace ? { namespace } : {}) },
      servedBy: options.identity,
      entries: shown,
      ...(withheld ? { withheld } : {}),
    };
    return reply.send(body);
  };
  app.get(`/apis/${ADMISSIONS_API_VERSION}/namespaces/:namespace/${HOOK_HISTORY_RESOURCE}/:name`, handler);
  app.get(`/apis/${ADMISSIONS_API_VERSION}/${HOOK_HISTORY_RESOURCE}/:name`, handler);

  const url = await api.listen({ port: options.port, host: options.host ?? '0.0.0.0' });
  return { url, close: () => api.close() };
}
