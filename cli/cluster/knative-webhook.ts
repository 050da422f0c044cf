// Knative Serving's admission webhook (knative.dev/serving/cmd/webhook), built from the Go module proxy like
// the control plane (a wrapper module, cached under ~/.cache/kubeloop/knative-webhook), so tests can put
// Knative's own validation and defaulting in front of what the chart renders. Built on demand only.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { withBuildLock } from './binaries.ts';
import { goBuild, goVersion, runGo, type ProgressFn } from './go-build.ts';
import { executable, writeWrapperModule } from './go-wrapper.ts';
import { cacheRoot } from './versions.ts';

/**
 * Knative Serving 1.15. Newer releases (v0.51.0) need knative.dev/pkg, networking and caching pseudo-versions
 * that the Go module proxy refuses ("403 This module version is not available"); this one's are served. Its
 * client-go 0.29 and minimum Kubernetes 1.28 work against the local 1.35 API server.
 */
export const KNATIVE_WEBHOOK_VERSION = 'v0.42.2';
const MODULE = 'knative.dev/serving';
const PACKAGE = `${MODULE}/cmd/webhook`;

export function knativeWebhookPath(): string {
  return join(cacheRoot(), 'knative-webhook', `serving-${KNATIVE_WEBHOOK_VERSION}`, 'webhook');
}

/** Path of the webhook binary, building it first when it is not cached (minutes when cold). */
export async function ensureKnativeWebhook(onProgress: ProgressFn = () => {}): Promise<string> {
  const binary = knativeWebhookPath();
  if (await executable(binary)) return binary;
  if (!(await goVersion())) throw new Error(`building Knative Serving's webhook needs Go >= 1.22 on PATH (it is not cached at ${binary})`);
  return withBuildLock(onProgress, async () => {
    if (await executable(binary)) return binary;
    const src = join(cacheRoot(), 'src', `knative-webhook-${KNATIVE_WEBHOOK_VERSION}`);
    await mkdir(src, { recursive: true });
    await mkdir(join(binary, '..'), { recursive: true });
    await writeWrapperModule(src, 'knative-webhook', MODULE, KNATIVE_WEBHOOK_VERSION, PACKAGE, onProgress);
    await runGo({ args: ['mod', 'tidy'], cwd: src, label: 'go mod tidy (knative webhook)', onProgress });
    await goBuild(src, PACKAGE, binary, '-s -w', `Knative Serving webhook ${KNATIVE_WEBHOOK_VERSION}`, onProgress);
    return binary;
  });
}
