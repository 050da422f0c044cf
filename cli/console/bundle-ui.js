// Bundles the console's single-page UI (cli/console/ui: preact + htm, no external fonts or CDNs) with esbuild
// into three static files: index.html, app.js, app.css. Run by the package build (dist/console-ui) and, from
// a source checkout, by the console itself at start-up (in memory). Plain JavaScript: the build runs it as is.
import { build } from 'esbuild';
import { Buffer } from 'node:buffer';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ui = fileURLToPath(new URL('./ui/', import.meta.url));

/** The UI's files by URL path ("/", "/app.js", "/app.css"), with their content types. */
export async function bundleConsoleUi() {
  const result = await build({
    entryPoints: { app: join(ui, 'app.ts'), styles: join(ui, 'styles.css') },
    bundle: true,
    write: false,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outdir: '/console-ui',
    legalComments: 'none',
    logLevel: 'silent',
  });
  const file = (name) => result.outputFiles.find((f) => f.path.endsWith(name))?.contents;
  return new Map([
    ['/', { contentType: 'text/html; charset=utf-8', body: Buffer.from(await readFile(join(ui, 'index.html'))) }],
    ['/app.js', { contentType: 'text/javascript; charset=utf-8', body: Buffer.from(file('app.js')) }],
    ['/app.css', { contentType: 'text/css; charset=utf-8', body: Buffer.from(file('styles.css')) }],
  ]);
}

/** Writes the bundle to `<dist>/console-ui/` for the package. */
export async function writeConsoleUi(dist) {
  const outdir = join(dist, 'console-ui');
  await mkdir(outdir, { recursive: true });
  const assets = await bundleConsoleUi();
  for (const [path, asset] of assets) await writeFile(join(outdir, path === '/' ? 'index.html' : path.slice(1)), asset.body);
  return outdir;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  console.log(`bundle-ui: console UI in ${await writeConsoleUi(process.argv[2] ? resolve(process.argv[2]) : join(root, 'dist'))}`);
}
