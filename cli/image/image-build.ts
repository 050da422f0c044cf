// `kubeloop image build`: every final target of the Dockerfile as an OCI image, without a container engine. The
// build stage's steps run on this machine (Node 24, npm) in a cached directory keyed by the context's content; the
// runtime base is runtime-base.ts; the runtime stage's COPY and RUN steps make one application layer, a target's own
// steps (the router's snapshot) one more (RUN in a chroot of base + layers below, as the step's user); each target's
// config is the Dockerfile's.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, link, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { cacheRoot } from '../cluster/versions.ts';
import { contentKey, contextFiles, parseDockerignore } from './build-context.ts';
import { finalTargets, parseDockerfile, resolvePath, stageChain, type CopyStep, type RunStep, type Stage } from './dockerfile.ts';
import { createLayout, putImage, putLayer, writeIndex, type Descriptor, type ImageConfig } from './oci-image.ts';
import { assembleRuntimeBase, debianVersions, DISTROLESS_NODE_CONFIG } from './runtime-base.ts';

export interface BuiltImage {
  target: string;
  name: string;
  manifest: Descriptor;
  config: ImageConfig;
}

export interface ImageBuildOptions {
  /** The build context: the folder with the Dockerfile (kubeloop's checkout, or a project of `kubeloop init`). */
  repoRoot: string;
  /** Default: every final target of the Dockerfile. */
  targets?: string[];
  /** Image names are <registry>/<target>:<tag>; an unnamed final stage (a project's one image) takes the context's name. */
  registry: string;
  tag: string;
  /** OCI layout directory written (its blobs are kept between builds). */
  layout: string;
  onProgress: (line: string) => void;
}

function imageCacheDir(...parts: string[]): string {
  return join(cacheRoot(), 'image-build', ...parts);
}

function runStep(step: RunStep, cwd: string, env: NodeJS.ProcessEnv, root?: string): Promise<void> {
  const argv = typeof step.command === 'string' ? ['/bin/sh', '-c', step.command] : step.command;
  // Inside the image's root (util-linux unshare: chroot, then chdir to the step's WORKDIR), as the step's user.
  const [uid = '0', gid = uid] = step.user.split(':');
  const [command, args] = root
    ? ['/usr/bin/unshare', ['--root', root, '--wd', step.workdir, '--setuid', uid, '--setgid', gid, ...argv]]
    : [argv[0] as string, argv.slice(1)];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root ? '/' : cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
    child.stderr.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`RUN ${JSON.stringify(step.command)} failed (exit ${code}):\n${output}`))));
  });
}

/** COPY's source into the destination (a trailing / or several sources: into the directory). */
async function copyInto(step: CopyStep, fromRoot: string, files: string[] | undefined, toRoot: string): Promise<void> {
  const destPath = resolvePath(step.workdir, step.dest);
  for (const source of step.sources) {
    const target = destPath.endsWith('/') ? join(toRoot, destPath, source.split('/').pop() as string) : join(toRoot, destPath);
    if (files) {
      // From the build context: only the files .dockerignore lets through.
      for (const file of files.filter((f) => f === source || f.startsWith(`${source}/`))) {
        const out = file === source ? target : join(target, relative(source, file));
        await mkdir(dirname(out), { recursive: true });
        await cp(join(fromRoot, file), out);
      }
    } else await cp(join(fromRoot, source), target, { recursive: true, verbatimSymlinks: true });
  }
}

/**
 * The context's name (its package.json name, else its folder's): it names an unnamed final stage's image and keeps
 * each context's cached stages apart, so building a project does not evict kubeloop's own `build` stage.
 */
export async function contextName(repoRoot: string): Promise<string> {
  const pkg = await readFile(join(repoRoot, 'package.json'), 'utf8').then((t) => JSON.parse(t) as { name?: unknown }, () => ({ name: undefined }));
  return (typeof pkg.name === 'string' ? pkg.name : basename(repoRoot)).replace(/^@/, '').replace(/[^\w.-]+/g, '-').toLowerCase();
}

/** Runs a stage built FROM an outside image (the build stage) on this machine, cached by the context's content. */
async function buildStageOnHost(repoRoot: string, stage: Stage, onProgress: (line: string) => void): Promise<string> {
  const rules = parseDockerignore(await readFile(join(repoRoot, '.dockerignore'), 'utf8').catch(() => ''));
  const sources = stage.steps.flatMap((s) => (s.kind === 'copy' && !s.from ? s.sources : []));
  const files = await contextFiles(repoRoot, sources, rules);
  const key = await contentKey([process.version, JSON.stringify(stage.steps)], repoRoot, files);
  const prefix = `${await contextName(repoRoot)}-${stage.name}-`;
  const dir = imageCacheDir('stages', `${prefix}${key}`);
  if (await stat(join(dir, '.built')).then(() => true, () => false)) {
    onProgress(`stage ${stage.name}: cached (${dir})`);
    return dir;
  }
  const work = `${dir}.tmp-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  const started = Date.now();
  onProgress(`stage ${stage.name}: ${files.length} context files, running its ${stage.steps.length} steps in ${work}`);
  // The node and npm of this CLI (Node 24, as the stage's node:24 image), first on PATH.
  const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false' };
  for (const step of stage.steps) {
    const root = join(work, stage.config.WorkingDir);
    await mkdir(root, { recursive: true });
    if (step.kind === 'copy') await copyInto(step, repoRoot, files, work);
    else {
      onProgress(`stage ${stage.name}: RUN ${typeof step.command === 'string' ? step.command.replace(/\s+/g, ' ').slice(0, 100) : step.command.join(' ')}`);
      await runStep(step, join(work, step.workdir), env);
    }
  }
  await writeFile(join(work, '.built'), new Date().toISOString());
  await rm(dir, { recursive: true, force: true });
  await rename(work, dir);
  // Earlier trees of this stage (hundreds of MB with node_modules) are not needed again.
  for (const old of await readdir(imageCacheDir('stages'))) {
    if (old.startsWith(prefix) && join(imageCacheDir('stages'), old) !== dir) await rm(join(imageCacheDir('stages'), old), { recursive: true, force: true });
  }
  onProgress(`stage ${stage.name} built in ${Math.round((Date.now() - started) / 1000)}s`);
  return dir;
}

async function filesBelow(root: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(root, rel), { withFileTypes: true })) {
    const path = rel ? `${rel}/${entry.name}` : entry.name;
    out.push(path);
    if (entry.isDirectory()) out.push(...(await filesBelow(root, path)));
  }
  return out;
}

/**
 * A layer made once per key: its tar is kept in the cache and linked into the layout (an unchanged tree rebuilds
 * in seconds, to the same digests, though V8's compile cache the RUN step writes is not byte-for-byte stable).
 */
async function cachedLayer(layout: string, key: string, make: () => Promise<Descriptor>): Promise<Descriptor> {
  const meta = imageCacheDir('layers', `${key}.json`);
  const saved = await readFile(meta, 'utf8').then((t) => JSON.parse(t) as Descriptor, () => undefined);
  const dest = (d: Descriptor): string => join(layout, 'blobs', 'sha256', d.digest.replace('sha256:', ''));
  const cachedBlob = (d: Descriptor): string => imageCacheDir('layers', d.digest.replace('sha256:', ''));
  if (saved && (await stat(cachedBlob(saved)).then(() => true, () => false))) {
    if (!(await stat(dest(saved)).then(() => true, () => false))) await link(cachedBlob(saved), dest(saved)).catch(() => cp(cachedBlob(saved), dest(saved)));
    return saved;
  }
  const made = await make();
  await mkdir(imageCacheDir('layers'), { recursive: true });
  await rm(cachedBlob(made), { force: true });
  await link(dest(made), cachedBlob(made)).catch(() => cp(dest(made), cachedBlob(made)));
  await writeFile(meta, JSON.stringify(made));
  return made;
}

/** The base layer, cached by the node binary's version and the Debian packages' versions. */
async function runtimeBaseLayer(layout: string, onProgress: (line: string) => void): Promise<{ layer: Descriptor; rootfs: string; key: string }> {
  const versions = await debianVersions();
  const key = `node${process.version}-${versions.join('-').replace(/[^\w.+-]/g, '_')}`;
  const rootfs = imageCacheDir('base', key, 'rootfs');
  if (!(await stat(join(rootfs, '..', '.built')).then(() => true, () => false))) {
    onProgress(`runtime base: Node ${process.version} from the npm registry's node package, Debian ${versions.join(', ')}`);
    await assembleRuntimeBase(rootfs, process.execPath, imageCacheDir('debs'), versions);
    await writeFile(join(rootfs, '..', '.built'), key);
  }
  return { layer: await cachedLayer(layout, `base-${key}`, () => putLayer(layout, rootfs)), rootfs, key };
}

/**
 * COPY --from and RUN steps of one runtime stage over a copy of the base and the layers of the stages it builds on
 * (`below`: the router target's RUN needs the runtime stage's /app); the new paths make one layer.
 */
async function applicationLayer(layout: string, stage: Stage, baseRootfs: string, below: Descriptor[], stageDirs: Map<string, string>, onProgress: (line: string) => void): Promise<Descriptor> {
  const work = imageCacheDir('work', `${stage.name}-${process.pid}`);
  await rm(work, { recursive: true, force: true });
  await cp(baseRootfs, work, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
  for (const layer of below) await promisify(execFile)('tar', ['--numeric-owner', '-xf', join(layout, 'blobs', 'sha256', layer.digest.replace('sha256:', '')), '-C', work]);
  const basePaths = new Set(await filesBelow(work));
  try {
    for (const step of stage.steps) {
      await mkdir(join(work, step.workdir), { recursive: true });
      if (step.kind === 'copy') {
        const from = step.from ? stageDirs.get(step.from) : undefined;
        if (!from) throw new Error(`Dockerfile stage ${stage.name}: COPY --from=${step.from ?? '(context)'} is not supported here`);
        await copyInto(step, from, undefined, work);
        // --chown=0:0 in the Dockerfile; the copies are made by root anyway.
      } else {
        onProgress(`stage ${stage.name}: RUN ${JSON.stringify(step.command)} (chroot, user ${step.user})`);
        await runStep(step, join(work, step.workdir), { PATH: '/nodejs/bin:/usr/bin:/bin', HOME: '/root' }, work);
      }
    }
    const added = (await filesBelow(work)).filter((p) => !basePaths.has(p));
    // Parent directories the base already has are not repeated; tar keeps the listed paths only.
    return await putLayer(layout, work, added);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Builds the targets into `layout` and writes its index.json naming each image. */
export async function buildImages(opts: ImageBuildOptions): Promise<BuiltImage[]> {
  const stages = parseDockerfile(await readFile(join(opts.repoRoot, 'Dockerfile'), 'utf8'));
  const targets = opts.targets ?? finalTargets(stages);
  await createLayout(opts.layout);
  const stageDirs = new Map<string, string>();
  const layersOf = new Map<string, Descriptor[]>();
  const base = await runtimeBaseLayer(opts.layout, opts.onProgress);
  const built: BuiltImage[] = [];
  for (const target of targets) {
    const chain = stageChain(stages, target).reverse();
    // Outside-image stages that the chain copies from are built on this machine first (the build stage).
    for (const step of chain.flatMap((s) => s.steps)) {
      if (step.kind !== 'copy' || !step.from || stageDirs.has(step.from)) continue;
      const source = stages.find((s) => s.name === step.from);
      if (!source) throw new Error(`Dockerfile: COPY --from=${step.from}: no such stage`);
      stageDirs.set(step.from, await buildStageOnHost(opts.repoRoot, source, opts.onProgress));
    }
    const layers = [base.layer];
    for (const stage of chain.filter((s) => s.steps.length > 0)) {
      if (!layersOf.has(stage.name)) {
        // Keyed by what goes in: the base, the layers below, the stages it copies from (their dirs are content-keyed) and its steps.
        const below = layers.slice(1);
        const key = createHash('sha256')
          .update(JSON.stringify([base.key, below.map((d) => d.digest), [...stageDirs.values()], stage.steps]))
          .digest('hex')
          .slice(0, 32);
        layersOf.set(stage.name, [await cachedLayer(opts.layout, `${stage.name}-${key}`, () => applicationLayer(opts.layout, stage, base.rootfs, below, stageDirs, opts.onProgress))]);
      }
      layers.push(...(layersOf.get(stage.name) ?? []));
    }
    const own = chain[chain.length - 1] as Stage;
    const config: ImageConfig = { ...DISTROLESS_NODE_CONFIG, ...own.config, Env: mergeEnv(DISTROLESS_NODE_CONFIG.Env, own.config.Env) };
    // Docker names an unnamed stage by its index: such a target is the context's one image, named after it.
    const name = `${opts.registry}/${/^\d+$/.test(target) ? await contextName(opts.repoRoot) : target}:${opts.tag}`;
    built.push({ target, name, manifest: await putImage(opts.layout, { name, layers, config }), config });
    opts.onProgress(`image ${name}`);
  }
  await writeIndex(
    opts.layout,
    built.map((b) => b.manifest),
  );
  return built;
}

function mergeEnv(base: string[], own: string[]): string[] {
  const key = (e: string): string => e.slice(0, e.indexOf('='));
  return [...base.filter((b) => !own.some((o) => key(o) === key(b))), ...own];
}
