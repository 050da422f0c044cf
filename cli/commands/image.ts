// `kubeloop image build`: the Dockerfile's images without a container engine (cli/image/), written as an OCI
// layout or archive and, with --load, imported into the real node of `kubeloop cluster up --real-node`.
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseCommandArgs } from '../command-args.ts';
import { packageRoot, ownPackageJson } from '../package-root.ts';
import { cacheRoot } from '../cluster/versions.ts';
import { buildImages } from '../image/image-build.ts';
import { packOciArchive } from '../image/oci-image.ts';
import { importIntoRealNode } from '../cluster/real-node/image-import.ts';

const USAGE = `usage: kubeloop image build [--target NAME]... [--output DIR|FILE.tar] [--load] [--registry R] [--tag T]

  Builds every final target of the repository's Dockerfile (router, webhook, function-*) without Docker: the build
  stage runs here with Node 24 and npm, the runtime base is the npm registry's node binary with Debian's glibc,
  libstdc++ and CA certificates. Cached by content: an unchanged tree rebuilds in seconds.

  --target NAME         build only this target (repeatable)
  --output DIR          an OCI image layout directory (default ~/.cache/kubeloop/images/layout);
  --output FILE.tar     an OCI archive (skopeo copy oci-archive:FILE.tar docker://..., ctr images import FILE.tar)
  --load                import the images into the real node of "kubeloop cluster up --real-node" (--dir DIR: its state directory)
  --registry R, --tag T image names R/<target>:T (default ghcr.io/kubeloop and the package version, as the chart's defaults)`;

const progress = (line: string): void => void process.stderr.write(`${line}\n`);

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'image',
    argv,
    {
      target: { type: 'string', multiple: true },
      output: { type: 'string' },
      load: { type: 'boolean', default: false },
      registry: { type: 'string', default: 'ghcr.io/kubeloop' },
      tag: { type: 'string' },
      dir: { type: 'string' },
    },
    USAGE,
  );
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values, positionals } = parsed;
  if (positionals[0] !== 'build' || positionals.length > 1) {
    console.error(`kubeloop image: expected "build", got ${positionals.length === 0 ? 'nothing' : `"${positionals.join(' ')}"`}\n\n${USAGE}`);
    return 2;
  }
  const repoRoot = packageRoot();
  if (!existsSync(join(repoRoot, 'Dockerfile'))) {
    console.error(`kubeloop image: no Dockerfile in ${repoRoot}; image build runs from a kubeloop checkout`);
    return 2;
  }
  const output = values.output ? resolve(values.output) : undefined;
  const archive = output?.endsWith('.tar') ? output : undefined;
  const layout = archive || !output ? join(cacheRoot(), 'images', 'layout') : output;
  const started = Date.now();
  const built = await buildImages({
    repoRoot,
    registry: values.registry,
    tag: values.tag ?? ownPackageJson().version,
    layout,
    onProgress: progress,
    ...(values.target ? { targets: values.target } : {}),
  });
  const packed = archive ?? join(cacheRoot(), 'images', 'images.tar');
  if (archive || values.load) {
    await mkdir(dirname(packed), { recursive: true });
    await packOciArchive(layout, packed);
  }
  for (const image of built) console.log(`${image.name}  ${image.manifest.digest}`);
  progress(`${built.length} images in ${archive ?? layout} (${((Date.now() - started) / 1000).toFixed(1)}s)`);
  if (values.load) {
    const dir = resolve(values.dir ?? join(homedir(), '.kubeloop', 'cluster'));
    const state = await readFile(join(dir, 'state.json'), 'utf8').catch(() => undefined);
    if (!state) {
      console.error(`kubeloop image: --load needs a running "kubeloop cluster up --real-node" (no state in ${dir}; --dir names another)`);
      return 1;
    }
    await importIntoRealNode(join(dir, 'node'), packed);
    progress(`loaded into the real node (${dir}): pods can use them with imagePullPolicy: Never`);
  }
  return 0;
}
