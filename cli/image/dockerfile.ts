// Reads the repository's Dockerfile into stages and, per target, the image config and steps it declares, so
// `kubeloop image build` builds exactly what the Dockerfile says (it stays the source of truth). Pure: text in.
import type { ImageConfig } from './oci-image.ts';

export interface CopyStep {
  kind: 'copy';
  /** Stage the files come from (`--from=`), or undefined for the build context. */
  from?: string;
  sources: string[];
  dest: string;
  /** WORKDIR at this step: relative destinations resolve against it. */
  workdir: string;
}

export interface RunStep {
  kind: 'run';
  /** Exec form (JSON array) or shell form (a string for `sh -c`). */
  command: string[] | string;
  user: string;
  workdir: string;
}

export interface Stage {
  name: string;
  /** An image reference, or the name of an earlier stage it builds on. */
  base: string;
  /** Steps of this stage only (not its base's). */
  steps: (CopyStep | RunStep)[];
  /** Config after this stage's instructions, its base stage's included. */
  config: ImageConfig & { Env: string[]; User: string; WorkingDir: string };
}

/** Joins `\` continuations and drops comments and blank lines (the parser directive line is a comment too). */
function logicalLines(text: string): string[] {
  const out: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (pending === '' && /^\s*(#|$)/.test(line)) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    out.push((pending + line).trim());
    pending = '';
  }
  if (pending) out.push(pending.trim());
  return out;
}

/** `A=1 B="two words"` pairs (ENV, LABEL, ARG). */
function keyValues(text: string): [string, string][] {
  return [...text.matchAll(/([A-Za-z_][\w.-]*)=("(?:[^"\\]|\\.)*"|\S*)/g)].map((m) => {
    const value = m[2] ?? '';
    return [m[1] as string, value.startsWith('"') ? (JSON.parse(value) as string) : value];
  });
}

function substitute(text: string, args: Record<string, string>): string {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, braced: string | undefined, bare: string | undefined) => args[braced ?? bare ?? ''] ?? whole);
}

function resolvePath(workdir: string, path: string): string {
  return path.startsWith('/') ? path : `${workdir.replace(/\/$/, '')}/${path}`.replace(/\/\.\/?$/, '/').replace(/\/\.\//g, '/');
}

/** Parses the Dockerfile into its stages, in order. Unknown instructions are refused with their line. */
export function parseDockerfile(text: string): Stage[] {
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  let stage: Stage | undefined;
  for (const line of logicalLines(text)) {
    const [, instruction = '', rest = ''] = /^(\w+)\s*(.*)$/.exec(line) ?? [];
    const body = substitute(rest, args);
    const op = instruction.toUpperCase();
    if (op === 'ARG') {
      for (const [k, v] of keyValues(body)) args[k] = v;
      continue;
    }
    if (op === 'FROM') {
      const [, base = '', name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(body) ?? [];
      const parent = stages.find((s) => s.name === base);
      const config = parent ? structuredClone(parent.config) : { Env: [], User: '0:0', WorkingDir: '/' };
      stage = { name: name ?? String(stages.length), base, steps: [], config };
      stages.push(stage);
      continue;
    }
    if (!stage) throw new Error(`Dockerfile: ${op} before the first FROM: ${line}`);
    const config = stage.config;
    switch (op) {
      case 'WORKDIR':
        config.WorkingDir = resolvePath(config.WorkingDir, body);
        break;
      case 'ENV':
        for (const [k, v] of keyValues(body)) config.Env = [...config.Env.filter((e) => !e.startsWith(`${k}=`)), `${k}=${v}`];
        break;
      case 'USER':
        config.User = body;
        break;
      case 'LABEL':
        config.Labels = { ...config.Labels, ...Object.fromEntries(keyValues(body)) };
        break;
      case 'EXPOSE':
        config.ExposedPorts = { ...config.ExposedPorts, ...Object.fromEntries(body.split(/\s+/).map((p) => [p.includes('/') ? p : `${p}/tcp`, {}])) };
        break;
      case 'ENTRYPOINT':
        config.Entrypoint = JSON.parse(body) as string[];
        break;
      case 'CMD':
        config.Cmd = JSON.parse(body) as string[];
        break;
      case 'COPY': {
        const words = body.split(/\s+/);
        const flags = words.filter((w) => w.startsWith('--'));
        const paths = words.filter((w) => !w.startsWith('--'));
        const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
        const dest = paths.pop() ?? '';
        stage.steps.push({ kind: 'copy', ...(from ? { from } : {}), sources: paths, dest, workdir: config.WorkingDir });
        break;
      }
      case 'RUN':
        stage.steps.push({ kind: 'run', command: body.startsWith('[') ? (JSON.parse(body) as string[]) : body, user: config.User, workdir: config.WorkingDir });
        break;
      default:
        throw new Error(`Dockerfile: kubeloop image build does not handle ${op}: ${line}`);
    }
  }
  return stages;
}

/** The stage chain a target builds on, its own first: [router, runtime]. */
export function stageChain(stages: Stage[], target: string): Stage[] {
  const chain: Stage[] = [];
  for (let s = stages.find((x) => x.name === target); s; s = stages.find((x) => x.name === s?.base)) chain.push(s);
  if (chain.length === 0) throw new Error(`the Dockerfile has no target "${target}" (targets: ${stages.map((s) => s.name).join(', ')})`);
  return chain;
}

/** Targets worth building: stages no other stage builds on or copies from (the deployables). */
export function finalTargets(stages: Stage[]): string[] {
  const used = new Set(stages.flatMap((s) => [s.base, ...s.steps.flatMap((step) => (step.kind === 'copy' && step.from ? [step.from] : []))]));
  return stages.filter((s) => !used.has(s.name)).map((s) => s.name);
}

export { resolvePath };
