// `kubeloop webhook --dev` as a process, the way `kubeloop dev` runs it: it serves, registers the Watcher
// sidecar AdmissionHook with the API server, injects (through the watcher-sidecar function), and on SIGTERM
// deletes the webhook configurations it registered and exits cleanly.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { CoreV1Api } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFromSecret, readCertificateSecret } from '../../certs/secret-store.ts';
import { KubeClient } from '../../lib/kube/index.ts';
import watcherSidecar from '../../functions/watcher-sidecar/index.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { annotatedPod, createWatcher, createWatcherSidecarHook, deleteNamespace, devWebhookFor, installWatcherCrd, kubectl, logwatch, watcherSidecarHookFor } from './webhook-harness.ts';

let suite: ClusterSuite;
let child: ChildProcess | undefined;
let certNamespace: string;
let devArgs: string[];
let fn: ServedFunction | undefined;

beforeAll(async () => {
  suite = await setupClusterSuite('webhook-cli');
  ({ certNamespace, args: devArgs } = devWebhookFor(suite));
  await installWatcherCrd(suite);
  await createWatcher(suite, logwatch);
  fn = await serveFunction(watcherSidecar, { port: 0, host: '127.0.0.1', logger: createLogger({ name: 'watcher-sidecar', level: 'warn' }) });
});

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  if (suite) {
    await kubectl(suite, 'delete', 'clusteradmissionhook', `watcher-sidecar-${suite.namespace}`, '--ignore-not-found');
    await kubectl(suite, 'delete', 'mutatingwebhookconfiguration,validatingwebhookconfiguration', `kubeloop-admission-hooks-${suite.namespace}`, '--ignore-not-found');
    await deleteNamespace(suite, certNamespace);
    await suite.cleanup();
  }
  await fn?.close();
});

/** The Mutating- and ValidatingWebhookConfiguration of that name that exist, as kubectl names them. */
async function webhookConfigurations(name: string): Promise<string[]> {
  const { stdout } = await kubectl(suite, 'get', 'mutatingwebhookconfiguration,validatingwebhookconfiguration', '--field-selector', `metadata.name=${name}`, '-o', 'name');
  return stdout.split('\n').filter(Boolean);
}

describe('kubeloop webhook --dev', () => {
  it('serves over HTTPS, registers itself, injects into a pod the API server admits, and on SIGTERM unregisters and exits 0', async () => {
    child = spawn(process.execPath, ['cli/bin.js', 'webhook', ...devArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    let url: string | undefined;
    let opsUrl: string | undefined;
    for await (const line of createInterface({ input: child.stdout! })) {
      if (line.includes('"webhook serving"')) {
        ({ url, opsUrl } = JSON.parse(line) as { url: string; opsUrl: string });
        break;
      }
    }
    child.stdout!.resume();
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ready = await request(`${opsUrl}/readyz`);
    expect(ready.statusCode).toBe(200);
    await ready.body.dump();

    // Its certificate is in the Secret it created, and verifies for 127.0.0.1; without the API server's
    // client certificate nothing gets past the handshake.
    const client = await KubeClient.fromKubeConfig(suite.kubeConfig);
    const secret = await readCertificateSecret(client, { namespace: certNamespace, name: 'kubeloop-webhook-tls' });
    await client.close();
    const agent = new Agent({ connect: { ca: bundleFromSecret(secret!).ca.certPem } });
    await expect(request(`${url}/readyz`, { dispatcher: agent })).rejects.toThrow();
    await agent.close();

    // The injector's AdmissionHook, served by the process once its Watcher cache has synced.
    await createWatcherSidecarHook(suite, await watcherSidecarHookFor(suite, fn!.url));
    const core = suite.kubeConfig.makeApiClient(CoreV1Api);
    const pod = await core.createNamespacedPod({ namespace: suite.namespace, body: annotatedPod('via-cli') });
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(['main', 'logwatch']);
    const configuration = `kubeloop-admission-hooks-${suite.namespace}`;
    expect(await webhookConfigurations(configuration)).toContain(`mutatingwebhookconfiguration.admissionregistration.k8s.io/${configuration}`);

    // A developer's Ctrl-C: a configuration left behind would point the API server at a dead process and
    // block admission in the namespace (failurePolicy Fail) until deleted by hand.
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    expect(await webhookConfigurations(configuration)).toEqual([]);
    const after = await core.createNamespacedPod({ namespace: suite.namespace, body: annotatedPod('after-stop') });
    expect(after.spec?.containers.map((c) => c.name)).toEqual(['main']);
  });

  it('told to stop while still starting (its listener already answering), shuts down as usual once started: exit 0', async () => {
    // Probes reach the listener before the hooks are served; a kubelet's SIGTERM may land in that window.
    const starting = spawn(process.execPath, ['cli/bin.js', 'webhook', ...devArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(starting, 'exit');
    for await (const line of createInterface({ input: starting.stdout! })) {
      if (line.includes('Server listening at https://')) break;
    }
    starting.kill('SIGTERM');
    const logged: string[] = [];
    starting.stdout!.on('data', (chunk: Buffer) => logged.push(chunk.toString()));
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(logged.join('')).toContain('shutdown complete');
  });
});
