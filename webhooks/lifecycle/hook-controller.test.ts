// HookController on in-memory informers (as the router's LoopController is tested): what a user sees after
// adding, breaking, deleting a hook: the webhook configurations it writes and each hook's Ready condition.
// The API server is an in-memory stand-in for those writes; the real one is covered by the e2e suites
// (test/e2e/admission-hooks.test.ts, tenant-hooks.test.ts).
import { pino, type Logger } from 'pino';
import type { V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AdmissionHook, AdmissionHookSpec } from '../../api/admission-hook.ts';
import type { Condition } from '../../api/meta.ts';
import type { KubeObject } from '../../lib/contract/types.ts';
import { KubeApiError, type KubeClient, type KubeRequest } from '../../lib/kube/kube-client.ts';
import { MemoryInformers } from '../../test/support/memory-informers.ts';
import { ContextCache } from '../gateway/context-cache.ts';
import { HookController } from './hook-controller.ts';
import { CLUSTER_ADMISSION_HOOK_RESOURCE, NAMESPACED_ADMISSION_HOOK_RESOURCE } from './hook-informers.ts';
import { CONFIGURATION_PATHS } from './hook-configuration-writer.ts';
import { tenantBucket, tenantConfigurationName } from './hook-configuration-shards.ts';

const WAIT = { timeout: 10_000, interval: 20 };
const NAME = 'kubeloop-admission-hooks';
const BUCKETS = 4;
const logger = pino({ level: 'silent' });

const spec = (extra: Partial<AdmissionHookSpec> = {}): AdmissionHookSpec => ({
  type: 'validating',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
  function: { url: 'http://require-label.hooks.svc:8080/admit' },
  serviceAccount: { namespace: 'hooks', name: 'require-label' },
  ...extra,
});

const hook = (name: string, namespace?: string, extra: Partial<AdmissionHookSpec> = {}): AdmissionHook => ({
  apiVersion: 'kubeloop.dev/v1alpha1',
  kind: namespace ? 'AdmissionHook' : 'ClusterAdmissionHook',
  metadata: { name, ...(namespace ? { namespace } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: new Date(0) },
  spec: spec(namespace ? { function: { service: { name: 'fn', namespace, port: 8080 } }, serviceAccount: { namespace, name: 'hook' }, ...extra } : extra),
});

/**
 * The API server as the controller writes to it: webhook configurations by server-side apply and delete,
 * status patches (seen by the informers, as a watch would show them), SubjectAccessReviews allowed.
 */
function memoryApi(informers: MemoryInformers, options: { undeletable?: string } = {}) {
  const configurations = new Map<string, V1ValidatingWebhookConfiguration>();
  const request = async ({ method = 'GET', path, query, body }: KubeRequest): Promise<unknown> => {
    if (path.endsWith('/subjectaccessreviews')) return { status: { allowed: true } };
    if (path.endsWith('/status') && method === 'PATCH') {
      const rest = path.split('/').slice(4); // /apis/<group>/<version>/...
      const namespaced = rest[0] === 'namespaces';
      const informer = informers.of('kubeloop.dev/v1alpha1', namespaced ? 'AdmissionHook' : 'ClusterAdmissionHook');
      const name = decodeURIComponent(rest.at(-2) ?? '');
      const current = informer.store.get(namespaced ? `${rest[1]}/${name}` : name);
      if (!current) throw new KubeApiError(404, 'NotFound', 'gone', { method, path });
      informer.put({ ...current, status: (body as { status: unknown }).status } as KubeObject);
      return {};
    }
    const type = Object.entries(CONFIGURATION_PATHS).find(([, prefix]) => path.startsWith(prefix))?.[0];
    if (!type) throw new Error(`unexpected request ${method} ${path}`);
    if (method === 'GET') return { items: [...configurations.keys()].filter((key) => key.startsWith(`${type}/`)).map((key) => ({ metadata: { name: key.split('/')[1] } })) };
    const key = `${type}/${decodeURIComponent(path.split('/').at(-1) ?? '')}`;
    if (method === 'DELETE') {
      if (key.endsWith(`/${options.undeletable}`)) throw new KubeApiError(403, 'Forbidden', 'may not delete', { method, path });
      if (!configurations.delete(key)) throw new KubeApiError(404, 'NotFound', 'gone', { method, path });
    } else if (!query?.dryRun) configurations.set(key, body as V1ValidatingWebhookConfiguration);
    return {};
  };
  return { client: { request } as unknown as KubeClient, configurations };
}

const controllers: HookController[] = [];
afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.stop()));
});

async function harness(options: { undeletable?: string; logger?: Logger } = {}) {
  const informers = new MemoryInformers([CLUSTER_ADMISSION_HOOK_RESOURCE, NAMESPACED_ADMISSION_HOOK_RESOURCE]);
  const api = memoryApi(informers, options);
  const clusterHooks = informers.of(CLUSTER_ADMISSION_HOOK_RESOURCE.apiVersion, CLUSTER_ADMISSION_HOOK_RESOURCE.kind);
  const teamHooks = informers.of(NAMESPACED_ADMISSION_HOOK_RESOURCE.apiVersion, NAMESPACED_ADMISSION_HOOK_RESOURCE.kind);
  const controller = new HookController({
    client: api.client,
    informers: (resource) => informers.of(resource.apiVersion, resource.kind),
    logger: options.logger ?? logger,
    contexts: new ContextCache(api.client, { logger }),
    configuration: { name: NAME, target: { service: { name: 'kubeloop-webhook', namespace: 'kubeloop-system' } }, kubeloopNamespace: 'kubeloop-system', onlyNamespaces: [], excludedNamespaces: [] },
    caBundle: () => undefined,
    tenantConfigurations: { buckets: BUCKETS, maxBytes: 512 * 1024 },
  });
  controllers.push(controller);
  const started = controller.start();
  clusterHooks.sync();
  teamHooks.sync();
  await started;
  /** A hook's Ready condition as a reader of its status sees it. */
  const ready = (id: string): Condition | undefined => {
    const object = (id.includes('/') ? teamHooks : clusterHooks).store.get(id) as AdmissionHook | undefined;
    return object?.status?.conditions?.find((c) => c.type === 'Ready');
  };
  const webhooks = (key: string) => api.configurations.get(key)?.webhooks ?? [];
  return { controller, clusterHooks, teamHooks, configurations: api.configurations, ready, webhooks };
}

describe('HookController', () => {
  it('registers a ClusterAdmissionHook added in the configuration it writes, and says Ready', async () => {
    const h = await harness();
    h.clusterHooks.put(hook('require-label') as KubeObject);
    await vi.waitFor(() => expect(h.ready('require-label')).toMatchObject({ status: 'True', reason: 'Registered' }), WAIT);
    const [entry] = h.webhooks(`validating/${NAME}`);
    expect(entry).toMatchObject({ name: 'require-label.hooks.kubeloop.dev', clientConfig: { service: { name: 'kubeloop-webhook', namespace: 'kubeloop-system', path: '/admit/require-label' } }, rules: [{ resources: ['configmaps'] }] });
    expect(h.controller.served.byId.has('require-label')).toBe(true);
  });

  it('leaves an invalid hook out and tells why in its Ready condition, while the valid one is registered', async () => {
    const h = await harness();
    h.clusterHooks.put(hook('require-label') as KubeObject);
    h.clusterHooks.put(hook('phones-home', undefined, { function: { url: 'https://fn.example.com/admit' } }) as KubeObject);
    await vi.waitFor(() => expect(h.ready('phones-home')).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: expect.stringContaining('is not a cluster Service') }), WAIT);
    await vi.waitFor(() => expect(h.ready('require-label')).toMatchObject({ status: 'True' }), WAIT);
    expect(h.webhooks(`validating/${NAME}`).map((w) => w.name)).toEqual(['require-label.hooks.kubeloop.dev']);
    expect(h.controller.served.byId.has('phones-home')).toBe(false);
  });

  it('unregisters a deleted hook: its entry leaves the configuration and it is served no more', async () => {
    const h = await harness();
    const object = hook('require-label') as KubeObject;
    h.clusterHooks.put(object);
    await vi.waitFor(() => expect(h.webhooks(`validating/${NAME}`)).toHaveLength(1), WAIT);
    h.clusterHooks.remove(object);
    await vi.waitFor(() => expect(h.webhooks(`validating/${NAME}`)).toEqual([]), WAIT);
    expect(h.controller.served.byId.has('require-label')).toBe(false);
  });

  it("confines a tenant's AdmissionHook to its namespace, in its bucket's configuration, and prunes that configuration once the hook is deleted", async () => {
    const h = await harness();
    const object = hook('require-team', 'team-a') as KubeObject;
    h.teamHooks.put(object);
    await vi.waitFor(() => expect(h.ready('team-a/require-team')).toMatchObject({ status: 'True', reason: 'Registered' }), WAIT);
    const tenantConfiguration = `validating/${tenantConfigurationName(NAME, tenantBucket('team-a', BUCKETS))}`;
    const [entry] = h.webhooks(tenantConfiguration);
    expect(entry?.namespaceSelector?.matchExpressions).toContainEqual({ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['team-a'] });
    expect(entry?.rules?.every((rule) => rule.scope === 'Namespaced')).toBe(true);
    // Never in the cluster hooks' configuration, whose entries are sent every namespace.
    expect(h.webhooks(`validating/${NAME}`)).toEqual([]);

    h.teamHooks.remove(object);
    await vi.waitFor(() => expect(h.configurations.has(tenantConfiguration)).toBe(false), WAIT);
  });

  it("refuses a tenant's hook whose rules reach beyond its namespace, and registers nothing for it", async () => {
    const h = await harness();
    h.teamHooks.put(hook('watch-namespaces', 'team-a', { rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], scope: 'Cluster' }] }) as KubeObject);
    await vi.waitFor(() => expect(h.ready('team-a/watch-namespaces')).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: expect.stringContaining('rules[0].scope') }), WAIT);
    expect([...h.configurations.values()].flatMap((c) => c.webhooks ?? [])).toEqual([]);
  });

  it('on a dev-mode stop, deletes every configuration it wrote', async () => {
    const h = await harness();
    h.clusterHooks.put(hook('require-label') as KubeObject);
    h.teamHooks.put(hook('require-team', 'team-a') as KubeObject);
    await vi.waitFor(() => expect(h.ready('team-a/require-team')).toMatchObject({ status: 'True' }), WAIT);
    await h.controller.stop({ unregister: true });
    expect([...h.configurations.keys()]).toEqual([]);
  });

  it('on a dev-mode stop as an account that may not delete the cluster pair (kubeloop dev), deletes the rest and warns of nothing', async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const recording = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const h = await harness({ undeletable: NAME, logger: recording });
    h.clusterHooks.put(hook('require-label') as KubeObject);
    h.teamHooks.put(hook('require-team', 'team-a') as KubeObject);
    await vi.waitFor(() => expect(h.ready('team-a/require-team')).toMatchObject({ status: 'True' }), WAIT);
    await h.controller.stop({ unregister: true });
    expect([...h.configurations.keys()].every((key) => key.endsWith(`/${NAME}`))).toBe(true);
    expect(h.configurations.size).toBeGreaterThan(0);
    expect(lines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([]);
    expect(lines.map((l) => l.msg)).toContain('may not delete this webhook configuration: it points at this stopped process until whoever registered it deletes it');
  });
});
