// What `kubeloop dev` is told (flags, cli/commands/dev.ts) and how it speaks: its options, where the local
// processes log, and its line printer.
import { join } from 'node:path';
import type { ProjectSpec } from './project-function.ts';


export interface DevOptions {
  /** Run against this cluster instead of starting a local control plane. */
  kubeconfig?: string;
  /** Logs of the local processes go to <dir>/logs. */
  dir: string;
  /** kubeloop's namespace in dev mode (the webhook's certificate Secret lives there). */
  namespace: string;
  webhook: boolean;
  samples: boolean;
  /** Run Jaeger and export the router's, webhook's, functions' and kube-apiserver's spans to it. */
  tracing?: boolean;
  /** Start the seed functions and their Loops (false: only the user's function). */
  seeds: boolean;
  /** Users' projects: each function served locally and reloaded on change, its Loop and/or hook applied (project-function.ts). */
  projects?: ProjectSpec[];
  /** Make this namespace and a kubeconfig bound only to `admin` there; the project's files are applied as that user. */
  tenant?: string;
  statusIntervalMs: number;
  out: { write(text: string): boolean; isTTY?: boolean; columns?: number };
}

export type Say = (line?: string) => void;

export const logDirOf = (options: DevOptions): string => join(options.dir, 'logs');

export function sayTo(out: DevOptions['out']): Say {
  return (line = '') => void out.write(`${line}\n`);
}
