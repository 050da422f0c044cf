// The stand-in for the Dockerfile's runtime base (distroless Node.js, nonroot), assembled from what the package
// registries serve: the npm registry's Linux x64 `node` binary (this CLI's own Node 24) at /nodejs/bin/node,
// glibc, libstdc++ and libgcc from Debian packages, Debian's CA certificates, and distroless's users and /tmp.
import { execFile } from 'node:child_process';
import { chown, copyFile, mkdir, readdir, readFile, rm, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ImageConfig } from './oci-image.ts';

const run = promisify(execFile);

/** Debian packages the node binary links against (ldd: libc, libm, libdl, libpthread, libstdc++, libgcc_s) and the CA bundle. */
const DEBIAN_PACKAGES = ['libc6', 'libstdc++6', 'libgcc-s1', 'ca-certificates'] as const;

/** What distroless's nodejs<N>-debian12:nonroot image sets before the Dockerfile's own instructions. */
export const DISTROLESS_NODE_CONFIG: Required<Pick<ImageConfig, 'Env' | 'User' | 'WorkingDir' | 'Entrypoint'>> = {
  Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt'],
  User: '65532',
  WorkingDir: '/home/nonroot',
  Entrypoint: ['/nodejs/bin/node'],
};

export const NONROOT_UID = 65532;

/** The installed (same-release) versions of the packages, part of the base layer's cache key. */
export async function debianVersions(): Promise<string[]> {
  const { stdout } = await run('dpkg-query', ['-W', '-f=${Package}=${Version}\\n', ...DEBIAN_PACKAGES]);
  return stdout.trim().split('\n').sort();
}

/** Downloads the .deb files (apt-get download: the Debian registry) into `debs`, once. */
async function downloadDebs(debs: string, versions: string[]): Promise<string[]> {
  await mkdir(debs, { recursive: true });
  const have = await readdir(debs);
  if (have.filter((f) => f.endsWith('.deb')).length < DEBIAN_PACKAGES.length) await run('apt-get', ['download', ...versions], { cwd: debs });
  return (await readdir(debs)).filter((f) => f.endsWith('.deb')).map((f) => join(debs, f));
}

/** Fills `rootfs` with the base's files (owned as distroless has them). */
export async function assembleRuntimeBase(rootfs: string, nodeBinary: string, debsDir: string, versions: string[]): Promise<void> {
  await rm(rootfs, { recursive: true, force: true });
  await mkdir(join(rootfs, 'nodejs', 'bin'), { recursive: true });
  await copyFile(nodeBinary, join(rootfs, 'nodejs', 'bin', 'node'));
  await chmod(join(rootfs, 'nodejs', 'bin', 'node'), 0o755);
  for (const deb of await downloadDebs(debsDir, versions)) await run('dpkg-deb', ['-x', deb, rootfs]);
  // Documentation, locales and maintainer scripts' helpers are not needed to run node.
  for (const dir of ['usr/share/doc', 'usr/share/lintian', 'usr/share/locale', 'usr/share/man', 'usr/sbin', 'usr/bin', 'usr/share/ca-certificates-java']) {
    await rm(join(rootfs, dir), { recursive: true, force: true });
  }
  // ca-certificates ships the certificates; update-ca-certificates would concatenate them into the bundle.
  const mozilla = join(rootfs, 'usr', 'share', 'ca-certificates', 'mozilla');
  const certs = (await readdir(mozilla)).filter((f) => f.endsWith('.crt')).sort();
  const bundle = (await Promise.all(certs.map((f) => readFile(join(mozilla, f), 'utf8')))).join('');
  await mkdir(join(rootfs, 'etc', 'ssl', 'certs'), { recursive: true });
  await writeFile(join(rootfs, 'etc', 'ssl', 'certs', 'ca-certificates.crt'), bundle);
  await writeFile(join(rootfs, 'etc', 'passwd'), `root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:${NONROOT_UID}:${NONROOT_UID}:nonroot:/home/nonroot:/sbin/nologin\n`);
  await writeFile(join(rootfs, 'etc', 'group'), `root:x:0:\nnobody:x:65534:\nnonroot:x:${NONROOT_UID}:\n`);
  await mkdir(join(rootfs, 'tmp'), { recursive: true });
  await chmod(join(rootfs, 'tmp'), 0o1777);
  await mkdir(join(rootfs, 'home', 'nonroot'), { recursive: true });
  await chown(join(rootfs, 'home', 'nonroot'), NONROOT_UID, NONROOT_UID);
  await mkdir(join(rootfs, 'root'), { recursive: true, mode: 0o700 });
}
