// Builds the production bundle the way the Dockerfile does (tsc -p tsconfig.build.json, dist/bundle, cli/bin.js,
// package.json, node_modules without tsx/esbuild, the compile cache, the router's snapshot) into a temp dir, and
// reads each image target's ENTRYPOINT.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Removed from node_modules by the Dockerfile: images run dist/, never TypeScript. */
export const LEFT_OUT_OF_IMAGES = new Set(['tsx', 'esbuild', '@esbuild', '.bin']);

export interface ImageTarget {
  target: string;
  /** ENTRYPOINT after the node binary, e.g. ["cli/bin.js", "function", "podset"]. */
  args: string[];
  /** The target's own `ENV NAME=value` lines (NODE_OPTIONS for the router). */
  env: Record<string, string>;
}

/** What a target's ENTRYPOINT puts between the node binary and cli/bin.js (the router: its snapshot): node flags NODE_OPTIONS refuses. */
export function entrypointNodeFlags(target: ImageTarget): string[] {
  const entry = target.args.findIndex((arg) => arg === 'cli/bin.js' || arg === '--snapshot-blob');
  return target.args.slice(0, Math.max(0, entry));
}

/** `FROM runtime AS <target>` stages, their `ENV NAME=value` lines and their exec-form ENTRYPOINT (of `root`'s Dockerfile). */
export async function dockerfileTargets(root = REPO_ROOT): Promise<ImageTarget[]> {
  const text = await readFile(join(root, 'Dockerfile'), 'utf8');
  const targets: ImageTarget[] = [];
  let current: string | undefined;
  let env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const from = /^FROM\s+runtime\s+AS\s+(\S+)/i.exec(line);
    if (from) {
      current = from[1];
      env = {};
    }
    const variable = /^ENV\s+([A-Z_][A-Z0-9_]*)=(?:"([^"]*)"|(\S*))\s*$/.exec(line);
    if (variable && current) env[variable[1]!] = variable[2] ?? variable[3] ?? '';
    const entry = /^ENTRYPOINT\s+(\[.*\])\s*$/.exec(line);
    if (entry && current) {
      const [node, ...args] = JSON.parse(entry[1] ?? '[]') as string[];
      if (node !== '/nodejs/bin/node') throw new Error(`Dockerfile target ${current}: ENTRYPOINT must start with the node binary, got ${node}`);
      targets.push({ target: current, args, env });
      current = undefined;
    }
  }
  return targets;
}

/** Compiles into dir/dist (never the repo's own dist/, which would change what `node cli/bin.js` runs). */
export async function buildProductionBundle(dir: string): Promise<void> {
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    await run(process.execPath, [tsc, '-p', join(REPO_ROOT, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')], { cwd: REPO_ROOT });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    throw new Error(`npm run build (tsc -p tsconfig.build.json) failed:\n${failed.stdout ?? ''}${failed.stderr ?? ''}`);
  }
  // npm run build's second step: the bundled router, webhook and function entrypoints (dist/bundle).
  await run(process.execPath, [join(REPO_ROOT, 'cli', 'bundle-entrypoints.js'), join(dir, 'dist')], { cwd: REPO_ROOT });
  await mkdir(join(dir, 'cli'), { recursive: true });
  await copyFile(join(REPO_ROOT, 'cli', 'bin.js'), join(dir, 'cli', 'bin.js'));
  await copyFile(join(REPO_ROOT, 'cli', 'warm-compile-cache.js'), join(dir, 'cli', 'warm-compile-cache.js'));
  await copyFile(join(REPO_ROOT, 'cli', 'build-snapshot.js'), join(dir, 'cli', 'build-snapshot.js'));
  await copyFile(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'));
  await mkdir(join(dir, 'node_modules'));
  for (const entry of await readdir(join(REPO_ROOT, 'node_modules'))) {
    if (LEFT_OUT_OF_IMAGES.has(entry)) continue;
    await symlink(join(REPO_ROOT, 'node_modules', entry), join(dir, 'node_modules', entry));
  }
  // The Dockerfile's RUN step: V8's compile cache of what the entrypoints load, at the bundle's own paths.
  await run(process.execPath, [join(dir, 'cli', 'warm-compile-cache.js')], { cwd: dir });
  // The router target's RUN step: its startup snapshot, made where it runs from.
  await run(process.execPath, [join(dir, 'cli', 'build-snapshot.js')], { cwd: dir });
}

/** Every file path under dir, not following node_modules (to see whether a process wrote into its image). */
export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (sub: string): Promise<void> => {
    for (const entry of await readdir(join(dir, sub), { withFileTypes: true })) {
      const rel = join(sub, entry.name);
      if (rel === 'node_modules') continue;
      if (entry.isDirectory()) await walk(rel);
      else out.push(rel);
    }
  };
  await walk('');
  return out.sort();
}

export interface RunningEntrypoint {
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then the exit code (or the signal name). */
  stop(): Promise<number | string>;
}

/** Runs `node <args>` from the bundle dir as the image would (cwd /app, NODE_ENV=production). */
export function startEntrypoint(dir: string, args: string[], env: NodeJS.ProcessEnv): RunningEntrypoint {
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: { PATH: process.env.PATH, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
