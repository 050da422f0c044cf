// AdmissionHooks through the real API server: the gateway registers one webhook per hook, calls the
// functions (signed, with the hook's Secret), applies their answers and, when a function is down, slow,
// answers garbage or answers unsigned, its failure policy.
import { createServer, type Server } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdmissionHook, AdmissionHookSpec } from '../../api/admission-hook.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { allow, defineAdmission, deny, mutate, type AdmissionRequest } from '../../lib/sdk/index.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { generateSigningSecret } from '../../lib/signing/webhook-signature.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { deleteNamespace, HOOK_SUITE_LABEL, installWatcherCrd, kubectl, startWebhookFor, type WebhookUnderTest } from './webhook-harness.ts';

let suite: ClusterSuite;
let ns: string;
let core: CoreV1Api;
let custom: CustomObjectsApi;
let under: WebhookUnderTest;
const functions: ServedFunction[] = [];
let chaos: Server;
let chaosUrl: string;
const hookNames: string[] = [];
const logger = createLogger({ name: 'fn', level: 'silent' });
/** Every AdmissionRequest the add-team function saw, to tell first calls from reinvocations. */
const addTeamCalls: AdmissionRequest[] = [];

const requireTeam = defineAdmission({
  name: 'require-team',
  type: 'validating',
  admit: (request) =>
    request.object?.metadata?.labels?.team ? allow() : deny(`pod "${request.object?.metadata?.name ?? ''}" needs a "team" label in namespace ${request.namespace}${request.dryRun ? ' (dry run)' : ''}`),
});
const addTeam = defineAdmission({
  name: 'add-team',
  type: 'mutating',
  admit: (request) => {
    addTeamCalls.push(request);
    return mutate(request, (pod) => {
      pod.metadata!.labels = { ...pod.metadata?.labels, team: pod.metadata?.labels?.team ?? 'platform' };
    });
  },
});
// Runs after add-team (webhooks are called in name order) and changes the pod, so add-team is reinvoked.
const stamp = defineAdmission({
  name: 'stamp',
  type: 'mutating',
  admit: (request) => mutate(request, (pod) => {
    pod.metadata!.annotations = { ...pod.metadata?.annotations, stamped: 'yes' };
  }),
});

async function createHook(name: string, spec: AdmissionHookSpec): Promise<void> {
  hookNames.push(name);
  // Hooks without context objects: their ServiceAccount needs no RBAC.
  const body: AdmissionHook = { apiVersion: 'kubeloop.dev/v1alpha1', kind: 'ClusterAdmissionHook', metadata: { name, labels: { [HOOK_SUITE_LABEL]: ns } }, spec: { serviceAccount: { namespace: ns, name: 'hooks' }, ...spec } };
  await custom.createClusterCustomObject({ group: 'kubeloop.dev', version: 'v1alpha1', plural: 'clusteradmissionhooks', body });
}

async function readyCondition(name: string): Promise<{ status?: string; reason?: string; message?: string } | undefined> {
  const hook = (await custom.getClusterCustomObject({ group: 'kubeloop.dev', version: 'v1alpha1', plural: 'clusteradmissionhooks', name })) as AdmissionHook;
  return hook.status?.conditions?.find((c) => c.type === 'Ready');
}

const podRule = [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' as const }];
const pod = (name: string, labels: Record<string, string> = {}): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] },
});

async function kubectlCreate(body: V1Pod, ...extra: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const file = join(tmpdir(), `${ns}-${body.metadata?.name}-${Date.now()}.json`);
  await writeFile(file, JSON.stringify(body));
  try {
    return { ok: true, ...(await kubectl(suite, 'create', '-n', ns, '-f', file, '-o', 'json', ...extra)) };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

beforeAll(async () => {
  suite = await setupClusterSuite('admission-hooks');
  ns = suite.namespace;
  core = suite.kubeConfig.makeApiClient(CoreV1Api);
  custom = suite.kubeConfig.makeApiClient(CustomObjectsApi);
  await installWatcherCrd(suite);
  for (const definition of [requireTeam, addTeam, stamp]) functions.push(await serveFunction(definition, { port: 0, host: '127.0.0.1', logger }));
  // A function that misbehaves on purpose: /slow never answers in time, /garbage answers HTML.
  chaos = createServer((request, response) => {
    request.resume();
    if (request.url === '/slow') setTimeout(() => response.end('{}'), 4000).unref();
    else response.writeHead(200, { 'content-type': 'text/html' }).end('<html>oops</html>');
  });
  await new Promise<void>((resolve) => chaos.listen(0, '127.0.0.1', resolve));
  chaosUrl = `http://127.0.0.1:${(chaos.address() as { port: number }).port}`;
  under = await startWebhookFor(suite);
});

afterAll(async () => {
  for (const name of hookNames) await custom.deleteClusterCustomObject({ group: 'kubeloop.dev', version: 'v1alpha1', plural: 'clusteradmissionhooks', name }).catch(() => undefined);
  if (under) {
    await under.webhook.stop({ unregister: true });
    await deleteNamespace(suite, under.certNamespace);
  }
  await Promise.all(functions.map((f) => f.close()));
  chaos?.close();
  await suite?.cleanup();
});

describe('a validating hook', () => {
  beforeAll(async () => {
    await createHook(`require-team-${ns}`, {
      type: 'validating',
      rules: podRule,
      namespaceSelector: { matchLabels: { 'require-team': 'true' } },
      failurePolicy: 'Fail',
      function: { url: `${functions[0]!.url}/admit` },
    });
    await eventually('the hook Ready', async () => (await readyCondition(`require-team-${ns}`))?.status === 'True');
  });

  it('denies pods without a team label in a labelled namespace, and kubectl shows the function’s message', async () => {
    expect((await kubectlCreate(pod('before-label'))).ok).toBe(true);
    await kubectl(suite, 'label', 'namespace', ns, 'require-team=true');
    const denied = await eventually('pods without a team denied', async () => {
      const result = await kubectlCreate(pod(`probe-${Date.now()}`));
      return !result.ok && result;
    });
    expect(denied.stderr).toMatch(new RegExp(`admission webhook "require-team-${ns}.hooks.kubeloop.dev" denied the request: pod "probe-\\d+" needs a "team" label in namespace ${ns}`));
    expect((await kubectlCreate(pod('with-team', { team: 'shop' }))).ok).toBe(true);
  });

  it('tells the function about a server-side dry run, and persists nothing', async () => {
    const denied = await kubectlCreate(pod('dry-denied'), '--dry-run=server');
    expect(denied.ok).toBe(false);
    expect(denied.stderr).toContain('needs a "team" label in namespace');
    expect(denied.stderr).toContain('(dry run)');
    const allowed = await kubectlCreate(pod('dry-allowed', { team: 'shop' }), '--dry-run=server');
    expect(allowed.ok).toBe(true);
    await expect(core.readNamespacedPod({ name: 'dry-allowed', namespace: ns })).rejects.toThrow();
  });
});

describe('a mutating hook', () => {
  beforeAll(async () => {
    await createHook(`a-add-team-${ns}`, { type: 'mutating', rules: podRule, reinvocationPolicy: 'IfNeeded', objectSelector: { matchLabels: { mutate: 'yes' } }, function: { url: `${functions[1]!.url}/admit` } });
    await createHook(`b-stamp-${ns}`, { type: 'mutating', rules: podRule, objectSelector: { matchLabels: { mutate: 'yes' } }, function: { url: `${functions[2]!.url}/admit` } });
    for (const name of [`a-add-team-${ns}`, `b-stamp-${ns}`]) await eventually(`${name} Ready`, async () => (await readyCondition(name))?.status === 'True');
  });

  it('adds the label, and its reinvocation after another hook changed the pod changes nothing', async () => {
    const created = await eventually('the pod mutated by both hooks', async () => {
      const result = await kubectlCreate(pod(`mutated-${Date.now()}`, { mutate: 'yes', team: 'x' }), '--dry-run=server');
      const body = result.ok ? (JSON.parse(result.stdout) as V1Pod) : undefined;
      return body?.metadata?.annotations?.stamped === 'yes' && body;
    });
    expect(created.metadata?.labels).toEqual({ mutate: 'yes', team: 'x' });
    addTeamCalls.length = 0;
    const result = await kubectlCreate(pod('labelled-by-hook', { mutate: 'yes' }));
    expect(result.ok).toBe(true);
    const stored = await core.readNamespacedPod({ name: 'labelled-by-hook', namespace: ns });
    expect(stored.metadata?.labels).toEqual({ mutate: 'yes', team: 'platform' });
    expect(stored.metadata?.annotations?.stamped).toBe('yes');
    // Called once, then reinvoked (IfNeeded) because stamp changed the pod: the second call already has the label.
    const calls = addTeamCalls.filter((c) => c.object?.metadata?.name === 'labelled-by-hook');
    expect(calls.length).toBe(2);
    expect(calls[1]!.object?.metadata?.labels?.team).toBe('platform');
  });
});

describe('signed admission calls', () => {
  const SECRET = generateSigningSecret();
  const signingSecretRef = () => ({ namespace: ns, name: 'hook-signing', key: 'secret' });
  let forger: Server;
  /** Paths the forger was called at: a hook whose Secret is missing must never reach it. */
  const forgerCalls: string[] = [];
  beforeAll(async () => {
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'hook-signing' }, stringData: { secret: SECRET } } });
    const signed = await serveFunction(defineAdmission({ name: 'signed-label', type: 'mutating', admit: (request) => mutate(request, (p) => void (p.metadata!.labels = { ...p.metadata?.labels, signed: 'ok' })) }), { port: 0, host: '127.0.0.1', logger, signingSecret: SECRET });
    functions.push(signed);
    // Whoever answers at a hook's address without the key: a patch adding a container, unsigned.
    forger = createServer((request, response) => {
      forgerCalls.push(request.url ?? '');
      request.resume();
      const patch = [{ op: 'add', path: '/metadata/labels/forged', value: 'yes' }];
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: true, patch }));
    });
    await new Promise<void>((resolve) => forger.listen(0, '127.0.0.1', resolve));
    const forgerUrl = `http://127.0.0.1:${(forger.address() as { port: number }).port}/admit`;
    await createHook(`signed-${ns}`, { type: 'mutating', rules: podRule, objectSelector: { matchLabels: { case: 'signed' } }, function: { url: `${signed.url}/admit`, signingSecretRef: signingSecretRef() } });
    await createHook(`forged-${ns}`, { type: 'mutating', rules: podRule, objectSelector: { matchLabels: { case: 'signed' } }, function: { url: forgerUrl, signingSecretRef: signingSecretRef() } });
    await createHook(`nokey-${ns}`, { type: 'mutating', rules: podRule, objectSelector: { matchLabels: { case: 'signed' } }, function: { url: `${forgerUrl}/nokey`, signingSecretRef: { ...signingSecretRef(), name: 'no-such-secret' } } });
    for (const name of [`signed-${ns}`, `forged-${ns}`, `nokey-${ns}`]) await eventually(`${name} Ready`, async () => (await readyCondition(name))?.status === 'True');
  });
  afterAll(() => void forger?.close());

  it("applies the signed function's patch and never the unsigned one, the gateway reading the hook's Secret", async () => {
    const created = await eventually('the signed patch applied', async () => {
      const result = await kubectlCreate(pod(`signed-${Date.now()}`, { case: 'signed', team: 'x' }), '--dry-run=server');
      const labels = result.ok ? (JSON.parse(result.stdout) as V1Pod).metadata?.labels : undefined;
      return labels?.signed === 'ok' && { labels, warnings: result.stderr };
    });
    expect(created.labels.forged).toBeUndefined();
    expect(created.warnings).toMatch(/admission hook "forged-[^"]+": function .* reply signature refused: missing signature/);
    // A hook whose signing Secret does not exist is never called unsigned.
    expect(created.warnings).toMatch(/admission hook "nokey-[^"]+": function .* was not called: signing Secret [^ ]+\/no-such-secret key "secret": the Secret does not exist/);
    expect(forgerCalls.filter((path) => path.includes('nokey'))).toEqual([]);
  });
});

describe('certificate rotation', () => {
  it('drops no admission of a stream through the gateway while the serving certificate is renewed three times', async () => {
    const rotator = under.webhook.rotator;
    if (!rotator) throw new Error('the dev webhook has self-managed certificates');
    const before = rotator.bundle.serving.certPem;
    let stop = false;
    const results: V1Pod[] = [];
    const stream = async (worker: number): Promise<void> => {
      for (let i = 0; !stop || i < 10; i++) {
        const body = pod(`stream-${worker}-${i}`, { mutate: 'yes', team: 'x' });
        results.push(await core.createNamespacedPod({ namespace: ns, body, dryRun: 'All' }));
      }
    };
    const streams = Promise.all([0, 1, 2, 3].map(stream));
    for (let renewal = 0; renewal < 3; renewal++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await rotator.check(true);
    }
    stop = true;
    await streams;
    expect(rotator.bundle.serving.certPem).not.toBe(before);
    // Both mutating hooks (Ignore) ran on every pod: a dropped call would have admitted it unstamped.
    expect(results.length).toBeGreaterThanOrEqual(40);
    expect(results.filter((p) => p.metadata?.annotations?.stamped !== 'yes').map((p) => p.metadata?.name)).toEqual([]);
  });
});

describe('a function that is down, slow or answers garbage', () => {
  const modes = { down: 'http://127.0.0.1:1/admit', slow: '/slow', garbage: '/garbage' } as const;
  beforeAll(async () => {
    for (const policy of ['Ignore', 'Fail'] as const) {
      for (const [mode, path] of Object.entries(modes)) {
        const name = `${mode}-${policy.toLowerCase()}-${ns}`;
        await createHook(name, {
          type: 'validating',
          rules: podRule,
          failurePolicy: policy,
          timeoutSeconds: 2,
          objectSelector: { matchLabels: { chaos: `${mode}-${policy.toLowerCase()}` } },
          function: { url: path.startsWith('http') ? path : `${chaosUrl}${path}` },
        });
      }
    }
    for (const name of hookNames.filter((n) => /^(down|slow|garbage)-/.test(n))) await eventually(`${name} Ready`, async () => (await readyCondition(name))?.status === 'True');
  });

  it.each(Object.keys(modes))('%s: Ignore admits the pod unchanged with a warning', async (mode) => {
    const result = await eventually('the hook in the API server', async () => {
      const attempt = await kubectlCreate(pod(`${mode}-ignored-${Date.now()}`, { chaos: `${mode}-ignore`, team: 'x' }), '--dry-run=server');
      return attempt.stderr.includes('failurePolicy Ignore') && attempt;
    });
    expect(result.ok).toBe(true);
    expect(result.stderr).toContain(`Warning: admission hook "${mode}-ignore-${ns}": function`);
    expect((JSON.parse(result.stdout) as V1Pod).metadata?.labels).toEqual({ chaos: `${mode}-ignore`, team: 'x' });
  });

  it.each([
    ['down', /is unreachable \(ECONNREFUSED\) \(failurePolicy Fail\)/],
    ['slow', /did not answer within 1600 ms \(failurePolicy Fail\)/],
    // The body itself goes to the gateway's log, not to whoever made the request.
    ['garbage', /reply is not JSON \(failurePolicy Fail\)/],
  ])('%s: Fail rejects the pod with a message naming the hook and the problem', async (mode, message) => {
    const result = await eventually('the hook in the API server', async () => {
      const attempt = await kubectlCreate(pod(`${mode}-failed-${Date.now()}`, { chaos: `${mode}-fail`, team: 'x' }), '--dry-run=server');
      return !attempt.ok && attempt;
    });
    expect(result.stderr).toContain(`admission webhook "${mode}-fail-${ns}.hooks.kubeloop.dev" denied the request: admission hook "${mode}-fail-${ns}": function`);
    expect(result.stderr).toMatch(message);
  });

  it('counts the failures and says so on the AdmissionHook', async () => {
    const metrics = await under.webhook.server.metrics.metrics();
    expect(metrics).toMatch(new RegExp(`kubeloop_admission_hook_failures_total\\{hook="garbage-fail-${ns}",reason="InvalidResponse",policy="Fail"\\} [1-9]`));
    const hook = await eventually('FunctionAvailable False', async () => {
      const object = (await custom.getClusterCustomObject({ group: 'kubeloop.dev', version: 'v1alpha1', plural: 'clusteradmissionhooks', name: `down-fail-${ns}` })) as AdmissionHook;
      return object.status?.conditions?.find((c) => c.type === 'FunctionAvailable' && c.status === 'False');
    });
    expect(hook).toMatchObject({ reason: 'Unreachable' });
  });
});

describe('an invalid AdmissionHook', () => {
  it('is not registered and says why in its Ready condition', async () => {
    await createHook(`bad-${ns}`, { type: 'validating', rules: [{ operations: ['*'], apiGroups: ['admissionregistration.k8s.io'], apiVersions: ['v1'], resources: ['*'] }], function: { url: 'http://127.0.0.1:1/' } });
    const ready = await eventually('Ready False', async () => {
      const condition = await readyCondition(`bad-${ns}`);
      return condition?.status === 'False' && condition;
    });
    expect(ready).toMatchObject({ reason: 'InvalidSpec' });
    expect(ready.message).toContain('would send webhook configurations or leases to a webhook');
  });
});
