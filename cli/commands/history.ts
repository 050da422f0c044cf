// `kubeloop history --loop LOOP -n NS NAME` (or `LOOP NS/NAME`): the last reconciles of one object, read from the router's
// flight recorder through the API server (the aggregated API history.kubeloop.dev), so RBAC decides:
// whoever may get the object may read its history. Exit 0 shown, 1 failure, 2 usage or refused.
import { loadKubeConfig } from '../../lib/kube/kube-config.ts';
import { isApiError, KubeClient } from '../../lib/kube/kube-client.ts';
import { historyRequest, type ObjectHistory } from '../../router/history/history-documents.ts';
import { parseCommandArgs } from '../command-args.ts';
import { readHistoryTarget } from '../history/history-args.ts';
import { formatHistory } from '../history/history-text.ts';

const USAGE = `usage: kubeloop history --loop LOOP -n NAMESPACE NAME [-o text|json] [--kubeconfig FILE] [--context NAME] [--as USER]
       kubeloop history --cluster-loop LOOP [-n NAMESPACE] NAME [...]
       kubeloop history LOOP [NAMESPACE/]NAME [...]

Shows the last reconciles the router kept for one primary of the Loop (its flight recorder): what
triggered each, the function's actions, each write's result, the durations and the trace id. Read through
the API server (APIService v1alpha1.history.kubeloop.dev): you see it when you may get the object.
  --loop LOOP          a namespaced Loop; -n names its namespace, which is the object's (a Loop reconciles
                       objects of its own namespace only)
  --cluster-loop LOOP  a ClusterLoop; -n names the object's namespace (none for a cluster-scoped kind)
  -n, --namespace NS   the object's namespace (NAMESPACE/NAME says the same)
  LOOP                 positional form: the Loop's identity (NAME for a ClusterLoop, NAMESPACE/NAME for a Loop)
  -o json              the ObjectHistory as JSON (an entry is a fixture for kubeloop replay --history)
  --as USER            impersonate USER (needs the impersonate verb), to check what they may read`;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'history',
    argv,
    {
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
  const problems = [typeof target === 'string' && target, !['text', 'json'].includes(output) && `--output: "${output}" is not text or json`].filter((p): p is string => typeof p === 'string');
  if (problems.length > 0 || typeof target === 'string') {
    console.error(`kubeloop history: ${problems.join('; ')}\n\n${USAGE}`);
    return 2;
  }
  const { loop, namespace, name } = target;
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
      console.error(`kubeloop history: ${error.message}\n(is the router's history API installed? kubectl get apiservice v1alpha1.history.kubeloop.dev)`);
      return 1;
    }
    throw error;
  } finally {
    await admin.close();
  }
}
