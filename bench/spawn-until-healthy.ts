// What bench:startup and bench:function-memory share: `node <root>/cli/bin.js <args>` spawned as an image runs it,
// polled until /healthz answers; they stop it with child-lifetime.ts's SIGTERM, so Node writes its compile cache.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { stopChild } from './child-lifetime.ts';

export interface Healthy {
  child: ChildProcess;
  /** Spawn to the first /healthz answer. */
  readyMs: number;
}

/**
 * Spawns `node <nodeFlags> cli/bin.js <args>` in `root` (NODE_ENV=production plus `env`) and resolves once GET
 * /healthz answers; `nodeFlags` are what an image's ENTRYPOINT puts before cli/bin.js (V8 flags NODE_OPTIONS refuses).
 * `entry` replaces `cli/bin.js` (the router's snapshot: `--snapshot-blob <blob>`).
 */
export async function startUntilHealthy(root: string, args: string[], port: number, env: NodeJS.ProcessEnv, nodeFlags: string[] = [], entry = [join(root, 'cli', 'bin.js')]): Promise<Healthy> {
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeFlags, ...entry, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited ${child.exitCode}: ${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      if (ok) return { child, readyMs: performance.now() - started };
      if (performance.now() - started > 30_000) throw new Error(`${args.join(' ')} not serving after 30 s: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } catch (error) {
    // SIGTERM (stopChild's), so that Node writes what it compiled into NODE_COMPILE_CACHE; SIGKILL would not.
    await stopChild(child);
    throw error;
  }
}
