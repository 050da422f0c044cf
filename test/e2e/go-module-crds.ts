// Knative Serving's CRDs, from the knative.dev/serving Go module in the Go module cache (outside the repo),
// so Knative Service manifests can be server-side dry-run applied to the local API server.
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Pinned: the newest knative.dev/serving the Go module proxy served when the chart was written. */
export const KNATIVE_SERVING_VERSION = 'v0.51.0';

export async function knativeServingCrdFiles(): Promise<string[]> {
  const { stdout } = await run('go', ['mod', 'download', '-json', `knative.dev/serving@${KNATIVE_SERVING_VERSION}`], {
    // Outside any module: plain module download into GOMODCACHE.
    cwd: '/',
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  const { Dir, Error: failure } = JSON.parse(stdout) as { Dir?: string; Error?: string };
  if (!Dir) throw new Error(`go mod download knative.dev/serving@${KNATIVE_SERVING_VERSION} failed: ${failure ?? stdout}`);
  const dir = join(Dir, 'config', 'core', '300-resources');
  return (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort().map((f) => join(dir, f));
}
