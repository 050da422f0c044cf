// `kubeloop image build` against the Dockerfile it reads: each final target's image has that target's entrypoint,
// user, working directory, environment and files (read back from the OCI layout, with the Dockerfile parsed here
// by test/support/production-bundle.ts's own reader, not the builder's), and an unchanged tree rebuilds from cache.
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImages, type BuiltImage } from '../../cli/image/image-build.ts';
import { dockerfileTargets, LEFT_OUT_OF_IMAGES, REPO_ROOT, type ImageTarget } from '../support/production-bundle.ts';

const run = promisify(execFile);
const layout = join(tmpdir(), `kubeloop-images-test-${process.pid}`);
const isRoot = process.getuid?.() === 0;

interface Manifest {
  config: { digest: string };
  layers: { digest: string }[];
}

const blob = (digest: string): string => join(layout, 'blobs', 'sha256', digest.replace('sha256:', ''));

let built: BuiltImage[];
let targets: ImageTarget[];
let dockerfile: string;
let progress: string[];

beforeAll(async () => {
  if (!isRoot) return;
  dockerfile = await readFile(join(REPO_ROOT, 'Dockerfile'), 'utf8');
  targets = await dockerfileTargets();
  progress = [];
  built = await buildImages({ repoRoot: REPO_ROOT, registry: 'ghcr.io/kubeloop', tag: '0.1.0', layout, onProgress: (line) => progress.push(line) });
}, 600_000);

afterAll(() => rm(layout, { recursive: true, force: true }));

describe.runIf(isRoot)('kubeloop image build', () => {
  it('builds one image per Dockerfile target, named as the chart expects', () => {
    expect(built.map((b) => b.target).sort()).toEqual(targets.map((t) => t.target).sort());
    for (const b of built) expect(b.name).toBe(`ghcr.io/kubeloop/${b.target}:0.1.0`);
  });

  it("gives each image its target's entrypoint, user, working directory and environment", async () => {
    // The runtime stage's last USER and its WORKDIR, read from the text.
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'), dockerfile.indexOf('AS router'));
    const user = [...runtime.matchAll(/^USER\s+(\S+)/gm)].pop()?.[1];
    const workdir = /^WORKDIR\s+(\S+)/m.exec(runtime)?.[1];
    const runtimeEnv = [...runtime.matchAll(/^ENV\s+(\w+)=(\S+)/gm)].map((m) => `${m[1]}=${m[2]}`);
    const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string; annotations: Record<string, string> }[] };
    for (const target of targets) {
      const entry = index.manifests.find((m) => m.annotations['io.containerd.image.name'] === `ghcr.io/kubeloop/${target.target}:0.1.0`);
      expect(entry, target.target).toBeDefined();
      const manifest = JSON.parse(await readFile(blob(entry?.digest ?? ''), 'utf8')) as Manifest;
      const { config } = JSON.parse(await readFile(blob(manifest.config.digest), 'utf8')) as { config: { Entrypoint: string[]; User: string; WorkingDir: string; Env: string[] } };
      expect(config.Entrypoint, target.target).toEqual(['/nodejs/bin/node', ...target.args]);
      expect(config.User, target.target).toBe(user);
      expect(config.WorkingDir, target.target).toBe(workdir);
      expect(config.Env, target.target).toEqual(expect.arrayContaining([...runtimeEnv, ...Object.entries(target.env).map(([k, v]) => `${k}=${v}`)]));
    }
  });

  it('holds the node binary, its libraries, CA certificates, the production bundle and the startup snapshot its entrypoint names, without dev tools', async () => {
    const router = built.find((b) => b.target === 'router');
    const manifest = JSON.parse(await readFile(blob(router?.manifest.digest ?? ''), 'utf8')) as Manifest;
    const files = new Set<string>();
    for (const layer of manifest.layers) {
      for (const line of (await run('tar', ['-tf', blob(layer.digest)], { maxBuffer: 1 << 27 })).stdout.split('\n')) files.add(line.replace(/^\.\//, '/').replace(/\/$/, ''));
    }
    for (const path of ['/nodejs/bin/node', '/lib64/ld-linux-x86-64.so.2', '/etc/ssl/certs/ca-certificates.crt', '/etc/passwd', '/tmp', '/app/package.json', '/app/cli/bin.js', '/app/dist/cli/main.js', '/app/node_modules/@kubernetes/client-node/package.json', '/app/.compile-cache', '/app/dist/bundle/router.blob']) {
      expect(files.has(path), path).toBe(true);
    }
    for (const left of LEFT_OUT_OF_IMAGES) expect(files.has(`/app/node_modules/${left}`), left).toBe(false);
    // The entrypoint's node runs from the image's own libraries: its dynamic loader is in the image.
    expect([...files].some((f) => /^\/(usr\/)?lib\/x86_64-linux-gnu\/libstdc\+\+\.so\.6/.test(f))).toBe(true);
  });

  it('rebuilds an unchanged tree from its cache, to the same digests', async () => {
    const lines: string[] = [];
    const again = await buildImages({ repoRoot: REPO_ROOT, registry: 'ghcr.io/kubeloop', tag: '0.1.0', layout, onProgress: (line) => lines.push(line) });
    expect(lines.some((l) => /^stage build: cached/.test(l))).toBe(true);
    expect(again.map((b) => b.manifest.digest)).toEqual(built.map((b) => b.manifest.digest));
  });
});
