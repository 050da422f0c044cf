// The webhook gateway over HTTPS with one hook, samples/admission-hooks/watcher-sidecar.yaml, forwarding
// to the watcher-sidecar function served over HTTP, and a fixed Watcher logwatch in namespace shop as
// its context: the Watcher injection path as the API server calls it, without a cluster.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { AdmissionHook } from '../../api/admission-hook.ts';
import type { Watcher } from '../../api/watcher.ts';
import type { KubeObject } from '../../api/meta.ts';
import { generateBundle, type CertificateBundle } from '../../certs/generate.ts';
import watcherSidecar from '../../functions/watcher-sidecar/index.ts';
import type { Logger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { listen } from '../../lib/server/index.ts';
import { contextObjectName } from '../../webhooks/gateway/context-objects.ts';
import { parseSigningSecrets } from '../../lib/signing/webhook-signature.ts';
import { FunctionCaller } from '../../webhooks/gateway/function-caller.ts';
import { DEV_HOOK_POLICY, resolveHook } from '../../webhooks/base/hook-spec.ts';
import { createWebhookServer, type WebhookServer } from '../../webhooks/server.ts';
import type { ContextHook, ContextResult } from '../../webhooks/gateway/context-cache.ts';

export const logwatch: Watcher = {
  apiVersion: 'watch.kubeloop.dev/v1alpha1',
  kind: 'Watcher',
  metadata: { name: 'logwatch', namespace: 'shop' },
  spec: { container: { name: 'logwatch', image: 'busybox:1.36' }, volume: { name: 'watch-data', emptyDir: {} } },
  status: { configMapName: 'logwatch-config' },
};

export interface WatcherSidecarGateway {
  bundle: CertificateBundle;
  server: WebhookServer;
  fn: ServedFunction;
  /** https://127.0.0.1:<port>/admit/watcher-sidecar */
  url: string;
  close(): Promise<void>;
}

export interface GatewayOptions {
  bodyLimitBytes?: number;
  /** The hook names a signing Secret holding this: the function verifies and signs with it, the gateway too. */
  signingSecret?: string;
  /** Call this function instead of the served one (a forger). */
  functionUrl?: string;
  /** The hook's spec.function.caBundle (base64 PEM), for an https functionUrl. */
  functionCaBundle?: string;
}

export async function startWatcherSidecarGateway(logger: Logger, options: GatewayOptions = {}): Promise<WatcherSidecarGateway> {
  const { signingSecret, functionUrl, functionCaBundle, ...limits } = options;
  const fn = await serveFunction(watcherSidecar, { port: 0, host: '127.0.0.1', logger, ...limits, ...(signingSecret ? { signingSecret } : {}) });
  const hook = parse(readFileSync(new URL('../../samples/admission-hooks/watcher-sidecar.yaml', import.meta.url), 'utf8')) as AdmissionHook;
  hook.spec!.function = {
    url: functionUrl ?? `${fn.url}/admit`,
    ...(signingSecret ? { signingSecretRef: { namespace: 'kubeloop', name: 'watcher-sidecar-signing', key: 'secret' } } : {}),
    ...(functionCaBundle ? { caBundle: functionCaBundle } : {}),
  };
  const resolved = resolveHook(hook, DEV_HOOK_POLICY);
  if (!resolved.ok) throw new Error(resolved.message);
  const hooks = new Map([[resolved.hook.name, resolved.hook]]);
  const bundle = await generateBundle({ now: new Date(), identity: { service: 'kubeloop-webhook', namespace: 'kubeloop' } });
  const caller = new FunctionCaller();
  const lookup = (hook: ContextHook, object: KubeObject | undefined, namespace: string | undefined): ContextResult => ({
    ok: true,
    bytes: 0,
    context: Object.fromEntries(hook.context.map((entry) => [entry.name, namespace === 'shop' && contextObjectName(entry.objectName, object) === 'logwatch' ? (logwatch as KubeObject) : null])),
  });
  // What HookSigningKeys would read from the hook's Secret.
  const keys = signingSecret ? parseSigningSecrets(signingSecret) : undefined;
  const signingKeys = async () => ({ ok: true as const, keys });
  const server = createWebhookServer({ logger, serving: bundle.serving, ...limits, gateway: { hooks: () => hooks, contexts: { lookup }, caller, signingKeys, reportCall: () => {} } });
  const base = await listen(server.app, { port: 0, host: '127.0.0.1' });
  return {
    bundle,
    server,
    fn,
    url: `${base}/admit/watcher-sidecar`,
    async close() {
      await server.app.close();
      await caller.close();
      await fn.close();
    },
  };
}
