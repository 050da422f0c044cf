// Whether `kubeloop router` can start from the V8 startup snapshot npm run build makes (cli/build-snapshot.js), and
// the Node arguments that do it: `node --snapshot-blob <blob> router ...`, the command line of `node cli/bin.js router ...`.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** dist/bundle/router.blob.json: the Node that made the blob, and the script it was made from. */
export interface SnapshotBuild {
  node: string;
  arch: string;
  platform: string;
  script: string;
}

export interface NodeRuntime {
  version: string;
  arch: string;
  platform: string;
}

/** Why a blob made as `made` says cannot start in `runtime`, or undefined when it can. */
export function snapshotMismatch(made: SnapshotBuild, script: string, runtime: NodeRuntime): string | undefined {
  // Node refuses a blob another version made (it exits 1); this one falls back instead.
  if (made.node !== runtime.version) return `made by Node ${made.node}, this is Node ${runtime.version}`;
  if (made.arch !== runtime.arch || made.platform !== runtime.platform) return `made for ${made.platform}/${made.arch}`;
  // The script's own paths (import.meta.url) were fixed when it was made.
  if (made.script !== script) return `made from ${made.script}, not ${script}`;
  return undefined;
}

export type SnapshotChoice = { nodeArgs: string[] } | { why: string };

/**
 * The Node arguments before `router ...` that start the router from the snapshot in `dist`, or why cli/bin.js
 * must start it instead: none built, made by another Node, or turned off as cli/bin.js's bundle is
 * (KUBELOOP_FROM_SOURCE, KUBELOOP_NO_BUNDLE), or on its own (KUBELOOP_NO_SNAPSHOT=1).
 */
export function routerSnapshot(dist: string, env: NodeJS.ProcessEnv = process.env, runtime: NodeRuntime = process): SnapshotChoice {
  if (env.KUBELOOP_FROM_SOURCE || env.KUBELOOP_NO_BUNDLE || env.KUBELOOP_NO_SNAPSHOT) return { why: 'turned off by the environment' };
  const blob = join(dist, 'bundle', 'router.blob');
  const about = `${blob}.json`;
  if (!existsSync(blob) || !existsSync(about)) return { why: `no ${blob} (npm run build makes it)` };
  let made: SnapshotBuild;
  try {
    made = JSON.parse(readFileSync(about, 'utf8')) as SnapshotBuild;
  } catch (error) {
    return { why: `${about} is unreadable: ${error instanceof Error ? error.message : String(error)}` };
  }
  const mismatch = snapshotMismatch(made, join(dist, 'bundle', 'router-snapshot.cjs'), runtime);
  return mismatch ? { why: `${blob} was ${mismatch}` } : { nodeArgs: ['--snapshot-blob', blob] };
}
