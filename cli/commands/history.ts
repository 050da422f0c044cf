// `kubeloop history <loop> <namespace>/<name>`: the last reconciles of one object, read from the router's
// flight recorder through the API server (the aggregated API history.kubeloop.dev), so RBAC decides:
// whoever may get the object may read its history. Exit 0 shown, 1 failure, 2 usage or refused.
import { loadKubeConfig } from '../../lib/kube/kube-config.ts';
import { isApiError, KubeClient } from '../../lib/kube/kube-client.ts';
import { historyRequest, type ObjectHistory } from '../../router/history/history-documents.ts';
import { parseCommandArgs } from '../command-args.ts';
import { formatHistory } from '../history/history-text.ts';

const USAGE = `usage: kubeloop history LOOP [NAMESPACE/]NAME [-o text|json] [--kubeconfig FILE] [--context NAME] [--as USER]

Shows the last reconciles the router kept for one primary of the Loop (its flight recorder): what
triggered each, the function's actions, each write's result, the durations and the trace id. Read through
the API server (APIService v1alpha1.history.kubeloop.dev): you see it when you may get the object.
  LOOP            the Loop's identity (its name; <namespace>/<name> for a namespaced Loop)
  NAMESPACE/NAME  the object (NAME alone for a cluster-scoped kind)
  -o json         the ObjectHistory as JSON (an entry is a fixture for kubeloop replay --history)
  --as USER       impersonate USER (needs the impersonate verb), to check what they may read`;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs('history', argv, { output: { type: 'string', short: 'o' }, kubeconfig: { type: 'string' }, context: { type: 'string' }, as: { type: 'string' } }, USAGE);
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values, positionals } = parsed;
  const output = values.output ?? 'text';
  const [loop, object, ...rest] = positionals;
  const problems = [
    (!loop || !object) && 'give the Loop and the object: kubeloop history LOOP NAMESPACE/NAME',
    rest.length > 0 && `unexpected argument "${rest[0]}"`,
    !['text', 'json'].includes(output) && `--output: "${output}" is not text or json`,
    object !== undefined && !/^([^/]+\/)?[^/]+$/.test(object) && `"${object}" is not NAMESPACE/NAME or NAME`,
  ].filter((p): p is string => typeof p === 'string');
  if (problems.length > 0 || !loop || !object) {
    console.error(`kubeloop history: ${problems.join('; ')}\n\n${USAGE}`);
    return 2;
  }
  const [namespace, name] = object.includes('/') ? (object.split('/') as [string, string]) : [undefined, object];
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
