// `kubeloop history --loop LOOP -n NS NAME`: one object's last reconciles from the router's flight recorder, read
// through the API server (aggregated API history.kubeloop.dev: whoever may get the object may read them), or with
// --file from the router's rotated history files. Exit 0 shown, 1 failure, 2 usage or refused.
import { existsSync } from 'node:fs';
import { loadKubeConfig } from '../../lib/kube/kube-config.ts';
import { isApiError, KubeClient } from '../../lib/kube/kube-client.ts';
import { historyRequest, type ObjectHistory, objectHistoryFromLines, readHistoryFiles } from '../../router/index.ts';
import { parseCommandArgs } from '../command-args.ts';
import { readHistoryTarget, type HistoryTarget } from '../history/history-args.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import { formatHistory } from '../history/history-text.ts';

const USAGE = `usage: kubeloop history --loop LOOP -n NAMESPACE NAME [-o text|json] [--kubeconfig FILE] [--context NAME] [--as USER]
       kubeloop history --cluster-loop LOOP [-n NAMESPACE] NAME [...]
       kubeloop history LOOP [NAMESPACE/]NAME [...]
       kubeloop history --file DIR|FILE (--loop LOOP -n NAMESPACE | --cluster-loop LOOP [-n NAMESPACE] | LOOP) NAME [-o text|json]

Shows the last reconciles the router kept for one primary of the Loop (its flight recorder): what
triggered each, the function's actions, each write's result, the durations and the trace id. Read through
the API server (APIService v1alpha1.history.kubeloop.dev): you see it when you may get the object; whether
a Loop runs at all is told only to who may get the Loop (anyone else gets the same 403 either way).
  --loop LOOP          a namespaced Loop; -n names its namespace, which is the object's (a Loop reconciles
                       objects of its own namespace only)
  --cluster-loop LOOP  a ClusterLoop; -n names the object's namespace (none for a cluster-scoped kind)
  -n, --namespace NS   the object's namespace (NAMESPACE/NAME says the same)
  LOOP                 positional form: the Loop's identity (NAME for a ClusterLoop, NAMESPACE/NAME for a Loop)
  --file DIR|FILE      read the router's rotated history files (--history-dir, copied from its pod) instead of
                       the API server: every file of the directory, oldest first, or one file
  -o json              the ObjectHistory as JSON (an entry is a fixture for kubeloop replay --history)
  --as USER            impersonate USER (needs the impersonate verb), to check what they may read`;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'history',
    argv,
    {
      file: { type: 'string' },
      loop: { type: 'string' },
      'cluster-loop': { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      output: { type: 'string', short: 'o' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      as: { type: 'string' },
    },
    USAGE,
  );
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values, positionals } = parsed;
  const output = values.output ?? 'text';
  const target = readHistoryTarget(positionals, values);
  const problems = [
    typeof target === 'string' && target,
    !['text', 'json'].includes(output) && `--output: "${output}" is not text or json`,
    values.file !== undefined && !existsSync(values.file) && `--file: ${values.file}: no such file or folder`,
    // The files are read as they are: no API server, so no identity to read them as.
    values.file !== undefined && (['kubeconfig', 'context', 'as'] as const).filter((flag) => values[flag] !== undefined).map((flag) => `--${flag} talks to the API server; --file reads files only`)[0],
  ].filter((p): p is string => typeof p === 'string');
  if (problems.length > 0 || typeof target === 'string') {
    console.error(`kubeloop history: ${problems.join('; ')}\n\n${USAGE}`);
    return 2;
  }
  const { loop, namespace, name } = target;
  if (values.file !== undefined) return showFromFiles(values.file, target, output);
  const kubeConfig = await loadKubeConfig({ ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}), ...(values.context ? { context: values.context } : {}) });
  const admin = await KubeClient.fromKubeConfig(kubeConfig);
  const client = values.as ? admin.impersonating({ user: values.as }, { qps: 5, burst: 10 }) : admin;
  try {
    const history = await client.request<ObjectHistory & { owner?: string }>(historyRequest(loop, namespace, name));
    console.log(output === 'json' ? JSON.stringify(history, null, 2) : formatHistory(history));
    return 0;
  } catch (error) {
    if (isApiError(error, 403) || isApiError(error, 401)) {
      console.error(`kubeloop history: refused: ${error.message}`);
      return 2;
    }
    if (isApiError(error, 404) || isApiError(error, 503)) {
      console.error(`kubeloop history: ${error.message}\n(${notFoundHint(error.message, values)})`);
      return 1;
    }
    throw error;
  } finally {
    await admin.close();
  }
}

/** The router answered but runs no such Loop: the flag that names the other kind; otherwise the API may be missing. */
function notFoundHint(message: string, flags: { loop?: string | undefined; 'cluster-loop'?: string | undefined }): string {
  if (!/\bno Loop \S+ runs on router/.test(message)) return "is the router's history API installed? kubectl get apiservice v1alpha1.history.kubeloop.dev";
  if (flags.loop) return `--loop names a namespaced Loop; for a ClusterLoop use --cluster-loop ${flags.loop.split('/').at(-1) ?? ''}`;
  if (flags['cluster-loop']) return `--cluster-loop names a ClusterLoop; for a namespaced Loop use --loop ${flags['cluster-loop']} -n NAMESPACE`;
  return 'kubectl get loops.kubeloop.dev -A; kubectl get clusterloops.kubeloop.dev: name a Loop as <namespace>/<name>, a ClusterLoop as <name>';
}

/** The object's entries in the history files, as the API would show them; exit 0 even when none is found (as the API). */
function showFromFiles(path: string, target: HistoryTarget, output: string): number {
  const read = readHistoryFiles(path);
  const history = objectHistoryFromLines(read.lines, target.loop, target.namespace, target.name);
  console.log(output === 'json' ? JSON.stringify(history, null, 2) : formatHistory(history));
  if (read.unreadable > 0) console.error(`kubeloop history: ${read.unreadable} line${read.unreadable === 1 ? '' : 's'} of ${path} held no entry (cut short by a full disk or a killed router) and were skipped`);
  if (history.entries.length === 0) {
    const loops = [...new Set(read.lines.map((line) => line.loop))];
    console.error(`kubeloop history: no entry of Loop ${target.loop} for ${objectKey(target)} in ${read.files.length} file${read.files.length === 1 ? '' : 's'} (${read.lines.length} entries${loops.length > 0 ? ` of Loop${loops.length === 1 ? '' : 's'} ${loops.slice(0, 5).join(', ')}` : ''})`);
  }
  return 0;
}
