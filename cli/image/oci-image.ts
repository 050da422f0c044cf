// Writes an OCI image (layout directory and tar archive) from directories of files and an image config, without a
// container engine: each directory becomes one reproducible uncompressed layer (sorted, mtime 0), blobs shared.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The parts of an image config a Dockerfile sets (what `docker inspect` shows under Config). */
export interface ImageConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  User?: string;
  WorkingDir?: string;
  ExposedPorts?: Record<string, Record<string, never>>;
  Labels?: Record<string, string>;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** An empty layout (blobs/sha256, oci-layout); blobs already there are kept, so layers are shared across builds. */
export async function createLayout(layout: string): Promise<void> {
  await mkdir(join(layout, 'blobs', 'sha256'), { recursive: true });
  await writeFile(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
}

async function putJson(layout: string, mediaType: string, value: unknown): Promise<Descriptor> {
  const bytes = JSON.stringify(value);
  const hex = createHash('sha256').update(bytes).digest('hex');
  await writeFile(join(layout, 'blobs', 'sha256', hex), bytes);
  return { mediaType, digest: `sha256:${hex}`, size: Buffer.byteLength(bytes) };
}

/**
 * A reproducible tar of `dir`'s contents (sorted, mtime 0, owners as on disk by number) stored as a blob; its
 * digest is also the layer's diff_id. `files`, when given, limits the layer to those paths (relative to dir).
 */
export async function putLayer(layout: string, dir: string, files?: string[]): Promise<Descriptor> {
  const tmp = join(layout, `layer-${process.pid}.tar`);
  const list = `${tmp}.list`;
  const select = files ? ['--no-recursion', '-T', list] : ['.'];
  if (files) await writeFile(list, files.map((f) => `./${f}`).join('\n') + '\n');
  await run('tar', ['--sort=name', '--mtime=@0', '--numeric-owner', '--format=gnu', '-C', dir, '-cf', tmp, ...select], { maxBuffer: 1 << 24 });
  await rm(list, { force: true });
  const hex = await sha256File(tmp);
  const size = (await stat(tmp)).size;
  await rename(tmp, join(layout, 'blobs', 'sha256', hex));
  return { mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: `sha256:${hex}`, size };
}

export interface OciImageSpec {
  /** Full reference the image is known by once imported, e.g. kubeloop.local/pause:v1. */
  name: string;
  layers: Descriptor[];
  config: ImageConfig;
}

/** Writes one image's config and manifest; returns the manifest descriptor, annotated with the image's name. */
export async function putImage(layout: string, spec: OciImageSpec): Promise<Descriptor> {
  const config = await putJson(layout, 'application/vnd.oci.image.config.v1+json', {
    architecture: 'amd64',
    os: 'linux',
    config: spec.config,
    rootfs: { type: 'layers', diff_ids: spec.layers.map((l) => l.digest) },
    history: spec.layers.map(() => ({ created_by: 'kubeloop image build' })),
  });
  const manifest = await putJson(layout, 'application/vnd.oci.image.manifest.v1+json', {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config,
    layers: spec.layers,
  });
  // containerd's import names the image after io.containerd.image.name; skopeo's oci:<dir>:<tag> reads ref.name.
  const tag = spec.name.slice(spec.name.lastIndexOf('/') + 1);
  return { ...manifest, annotations: { 'io.containerd.image.name': spec.name, 'org.opencontainers.image.ref.name': tag } };
}

/** The layout's index.json: the images it holds, by name. Blobs no image refers to any more are removed. */
export async function writeIndex(layout: string, manifests: Descriptor[]): Promise<void> {
  const index = {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: manifests.map((m) => ({ ...m, platform: { architecture: 'amd64', os: 'linux' } })),
  };
  await writeFile(join(layout, 'index.json'), JSON.stringify(index, null, 2));
  const keep = new Set<string>();
  for (const m of manifests) {
    keep.add(m.digest);
    const manifest = JSON.parse(await readFile(blobPath(layout, m.digest), 'utf8')) as { config: Descriptor; layers: Descriptor[] };
    for (const d of [manifest.config, ...manifest.layers]) keep.add(d.digest);
  }
  for (const hex of await readdir(join(layout, 'blobs', 'sha256'))) if (!keep.has(`sha256:${hex}`)) await rm(join(layout, 'blobs', 'sha256', hex), { force: true });
}

function blobPath(layout: string, digest: string): string {
  return join(layout, 'blobs', 'sha256', digest.replace(/^sha256:/, ''));
}

/** A one-image layout from directories (each one layer), replacing `layout`: the pause image. */
export async function writeOciLayout(layout: string, spec: { name: string; layers: string[]; config: ImageConfig }): Promise<string> {
  await rm(layout, { recursive: true, force: true });
  await createLayout(layout);
  const layers: Descriptor[] = [];
  for (const dir of spec.layers) layers.push(await putLayer(layout, dir));
  const manifest = await putImage(layout, { name: spec.name, layers, config: spec.config });
  await writeIndex(layout, [manifest]);
  return manifest.digest;
}

/** Packs a layout directory into an OCI archive (what `ctr images import` and skopeo's oci-archive: read). */
export async function packOciArchive(layout: string, archive: string): Promise<void> {
  const tmp = `${archive}.tmp-${process.pid}`;
  await run('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-C', layout, '-cf', tmp, 'oci-layout', 'index.json', 'blobs']);
  await rename(tmp, archive);
}
