// Extra Go programs built on demand (Knative's webhook, Jaeger): a wrapper module that requires the upstream
// module and repeats its replace directives (Go ignores them in a dependency), and the cached-binary check.
import { constants } from 'node:fs';
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runGo, writeTools, type ProgressFn } from './go-build.ts';

export async function executable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** Writes go.mod (module kubeloop.local/build/<name>) and tools.go importing `pkg` into `dir`. */
export async function writeWrapperModule(dir: string, name: string, module: string, version: string, pkg: string, onProgress: ProgressFn): Promise<void> {
  const { stdout } = await runGo({ args: ['mod', 'download', '-json', `${module}@${version}`], cwd: dir, label: module, onProgress });
  const upstream = await readFile((JSON.parse(stdout) as { GoMod: string }).GoMod, 'utf8');
  const goLine = /^go \S+$/m.exec(upstream)?.[0] ?? 'go 1.22';
  const replaces = [...upstream.matchAll(/^replace\s+(.+)$/gm)].map((m) => `replace ${m[1]}`).join('\n');
  await writeFile(join(dir, 'go.mod'), `module kubeloop.local/build/${name}\n\n${goLine}\n\nrequire ${module} ${version}\n\n${replaces}\n`);
  await writeTools(dir, [pkg]);
}
