// `kubeloop image build`: the Dockerfile's images without a container engine (cli/image/), written as an OCI
// layout or archive and, with --load, imported into the real node of `kubeloop cluster up --real-node`.
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseCommandArgs } from '../command-args.ts';
import { packageRoot, ownPackageJson } from '../package-root.ts';
import { cacheRoot } from '../cluster/versions.ts';
import { buildImages, contextName } from '../image/image-build.ts';
import { packOciArchive } from '../image/oci-image.ts';
import { withLayoutLock } from '../image/layout-lock.ts';
import { importIntoRealNode } from '../cluster/real-node/image-import.ts';

const USAGE = `usage: kubeloop image build [CONTEXT] [--target NAME]... [--output DIR|FILE.tar] [--load] [--registry R] [--tag T]

  Builds every final target of the Dockerfile in CONTEXT without Docker. CONTEXT defaults to the current folder
  when it has a Dockerfile (a project of "kubeloop init"), else kubeloop's own checkout. The build stage runs here
  with Node 24 and npm; the runtime base is the npm registry's node binary with Debian's glibc, libstdc++ and CA
  certificates.
  Cached by content: an unchanged tree rebuilds in seconds.

  --target NAME         build only this target (repeatable)
  --output DIR          an OCI image layout directory (default under ~/.cache/kubeloop/images);
  --output FILE.tar     an OCI archive (skopeo copy oci-archive:FILE.tar docker://..., ctr images import FILE.tar)
  --load                import the images into the real node of "kubeloop cluster up --real-node" (--dir DIR: its state directory)
  --registry R, --tag T image names R/<target>:T; a project's unnamed final stage is R/<its package name>:T. Defaults:
                        ghcr.io/kubeloop and kubeloop's version for kubeloop (the chart's), ghcr.io/your-org and the
                        project's version for a project (the image its function.yaml names)`;

const progress = (line: string): void => void process.stderr.write(`${line}\n`);

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'image',
    argv,
    {
      target: { type: 'string', multiple: true },
      output: { type: 'string' },
      load: { type: 'boolean', default: false },
      registry: { type: 'string' },
      tag: { type: 'string' },
      dir: { type: 'string' },
    },
    USAGE,
  );
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values, positionals } = parsed;
  if (positionals[0] !== 'build' || positionals.length > 2) {
    console.error(`kubeloop image: expected "build", got ${positionals.length === 0 ? 'nothing' : `"${positionals.join(' ')}"`}\n\n${USAGE}`);
    return 2;
  }
  const context = await buildContext(positionals[1]);
  if (typeof context === 'string') {
    console.error(`kubeloop image: ${context}`);
    return 2;
  }
  const output = values.output ? resolve(values.output) : undefined;
  const archive = output?.endsWith('.tar') ? output : undefined;
  const defaultDir = join(cacheRoot(), 'images', ...(context.own ? [] : ['projects', context.name]));
  const layout = archive || !output ? join(defaultDir, 'layout') : output;
  const started = Date.now();
  const packed = archive ?? join(defaultDir, 'images.tar');
  // Built and packed under the layout's lock: another build's index would prune these blobs before the pack read them.
  const built = await withLayoutLock(layout, progress, async () => {
    const images = await buildImages({
      repoRoot: context.dir,
      registry: values.registry ?? (context.own ? 'ghcr.io/kubeloop' : 'ghcr.io/your-org'),
      tag: values.tag ?? context.version,
      layout,
      onProgress: progress,
      ...(values.target ? { targets: values.target } : {}),
    });
    if (archive || values.load) {
      await mkdir(dirname(packed), { recursive: true });
      await packOciArchive(layout, packed);
    }
    return images;
  });
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

interface BuildContext {
  dir: string;
  name: string;
  version: string;
  /** kubeloop's own checkout: the chart's image names, and the layout its tests and --load read. */
  own: boolean;
}

/** The CONTEXT folder, else the current folder when it has a Dockerfile, else kubeloop's checkout; a message when none will do. */
async function buildContext(given: string | undefined): Promise<BuildContext | string> {
  const dir = given ? resolve(given) : existsSync(join(process.cwd(), 'Dockerfile')) ? process.cwd() : packageRoot();
  if (!existsSync(join(dir, 'Dockerfile'))) {
    return given ? `no Dockerfile in ${dir}` : `no Dockerfile here or in ${dir}; run it in a project of "kubeloop init" or a kubeloop checkout, or name the folder`;
  }
  const own = dir === packageRoot();
  const pkg = await readFile(join(dir, 'package.json'), 'utf8').then((t) => JSON.parse(t) as { version?: unknown }, () => ({ version: undefined }));
  const version = own ? ownPackageJson().version : typeof pkg.version === 'string' ? pkg.version : 'latest';
  return { dir, name: await contextName(dir), version, own };
}
