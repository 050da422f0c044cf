// Knative Serving's admission webhook (knative.dev/serving/cmd/webhook), built from the Go module proxy like
// the control plane (a wrapper module, cached under ~/.cache/kubeloop/knative-webhook), so tests can put
// Knative's own validation and defaulting in front of what the chart renders. Built on demand only.
import { constants } from 'node:fs';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withBuildLock } from './binaries.ts';
import { goBuild, goVersion, runGo, writeTools, type ProgressFn } from './go-build.ts';
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

async function executable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** The wrapper module: requires knative.dev/serving and repeats its replace directives (ignored in a dependency). */
async function writeWrapper(dir: string, onProgress: ProgressFn): Promise<void> {
  const { stdout } = await runGo({ args: ['mod', 'download', '-json', `${MODULE}@${KNATIVE_WEBHOOK_VERSION}`], cwd: dir, label: MODULE, onProgress });
  const upstream = await readFile((JSON.parse(stdout) as { GoMod: string }).GoMod, 'utf8');
  const goLine = /^go \S+$/m.exec(upstream)?.[0] ?? 'go 1.22';
  const replaces = [...upstream.matchAll(/^replace\s+(.+)$/gm)].map((m) => `replace ${m[1]}`).join('\n');
  await writeFile(join(dir, 'go.mod'), `module kubeloop.local/build/knative-webhook\n\n${goLine}\n\nrequire ${MODULE} ${KNATIVE_WEBHOOK_VERSION}\n\n${replaces}\n`);
  await writeTools(dir, [PACKAGE]);
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
    await writeWrapper(src, onProgress);
    await runGo({ args: ['mod', 'tidy'], cwd: src, label: 'go mod tidy (knative webhook)', onProgress });
    await goBuild(src, PACKAGE, binary, '-s -w', `Knative Serving webhook ${KNATIVE_WEBHOOK_VERSION}`, onProgress);
    return binary;
  });
}
