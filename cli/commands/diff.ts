// `kubeloop diff --loop NAME -n NS | --cluster-loop NAME | --hook NAME -n NS | --cluster-hook NAME --function MODULE|URL`: what a new version of a function would do
// differently from the running one, against the live cluster, without writing anything (server dry-run).
// Exit code 0 no change, 1 changes, 2 errors (usage, unreachable, forbidden): a CI gate.
import type { ClusterCredentials } from '../../lib/kube/kube-config.ts';
import { loadKubeConfig } from '../../lib/kube/kube-config.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { parseCommandArgs } from '../command-args.ts';
import { builtinFunctionsHelp } from '../command-list.ts';
import { readRecordedAdmissions } from '../diff/admission-diff.ts';
import { loadVersion, type FunctionEndpoint } from '../diff/function-endpoint.ts';
import { diffHook, readHook } from '../diff/hook-diff.ts';
import { diffLoop } from '../diff/loop-diff.ts';
import { DiffError, loopTitle, readLoop, readLoopState } from '../diff/loop-state.ts';
import { exitCodeOf, summarise, summaryTable } from '../diff/object-diff.ts';
import { formatHookReports, formatLoopReports } from '../diff/report-text.ts';
import { identityOf, readTarget } from '../scoped-names.ts';

const USAGE = `usage: kubeloop diff --loop NAME -n NAMESPACE | --cluster-loop NAME --function MODULE|URL
                     [--baseline MODULE|URL] [--kubeconfig FILE] [-o text|json] [--concurrency 8] [--qps 50] [--progress]
       kubeloop diff --hook NAME -n NAMESPACE | --cluster-hook NAME --function MODULE|URL --requests DIR
                     [--baseline MODULE|URL] [...]

--loop NAME -n NAMESPACE names a namespaced Loop, --cluster-loop NAME a ClusterLoop; --hook NAME -n NAMESPACE
an AdmissionHook, --cluster-hook NAME a ClusterAdmissionHook.
--loop, --cluster-loop: reads every primary of the Loop with its children, as the Loop's ServiceAccount (impersonation, as
the router does), sends each the request the router would send to the new version (--function) and to the
running one (the Loop's function URL, or --baseline), and prints per object the actions that differ and,
for those, the objects after the new version's writes against the live ones, computed by the API server
with dryRun=All (defaulting, admission and RBAC included; nothing is ever written).
--hook, --cluster-hook: sends every recorded admission request in DIR (AdmissionReviews as the API server sends them, or
kubeloop fixtures) to the hook's current function (or --baseline) and the new one, and lists the requests
whose decision, denial, warnings or patch changed.
  --function MODULE|URL  the new version: a module (default export defineFunction/defineAdmission) or
                         built-in name served in-process, or a running function's URL
  --baseline MODULE|URL  the version to compare with (default: the one the Loop or AdmissionHook names)
  --concurrency N        objects in flight at once (default 8)
  --qps N                API requests per second at most, as the Loop's ServiceAccount (default 50)
  --progress             a progress line on stderr even when it is not a terminal
Exit code: 0 no change, 1 changes, 2 errors (bad usage, a function or the API server unreachable, forbidden).
${builtinFunctionsHelp()}`;

function positiveInt(value: string | undefined, fallback: number): number | undefined {
  if (value === undefined) return fallback;
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

function progressLine(enabled: boolean): ((done: number, total: number) => void) | undefined {
  if (!enabled) return undefined;
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (done < total && now - last < 200) return;
    last = now;
    process.stderr.write(`\rkubeloop diff: ${done}/${total}${done === total ? '\n' : ''}`);
  };
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'diff',
    argv,
    {
      loop: { type: 'string' },
      'cluster-loop': { type: 'string' },
      hook: { type: 'string' },
      'cluster-hook': { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      function: { type: 'string' },
      baseline: { type: 'string' },
      requests: { type: 'string' },
      kubeconfig: { type: 'string' },
      output: { type: 'string', short: 'o' },
      concurrency: { type: 'string' },
      qps: { type: 'string' },
      progress: { type: 'boolean' },
    },
    USAGE,
  );
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values, positionals } = parsed;
  const output = values.output ?? 'text';
  const concurrency = positiveInt(values.concurrency, 8);
  const qps = positiveInt(values.qps, 50);
  const target = readTarget(values);
  const problems = [
    typeof target === 'string' && target,
    !values.function && '--function MODULE|URL (the new version) is required',
    typeof target !== 'string' && target.kind === 'hook' && !values.requests && `--${target.namespace === undefined ? 'cluster-' : ''}hook needs --requests DIR (recorded admission requests)`,
    typeof target !== 'string' && target.kind === 'loop' && values.requests && '--requests is for --hook and --cluster-hook only',
    positionals.length > 0 && `unexpected argument "${positionals[0]}"`,
    !['text', 'json'].includes(output) && `--output: "${output}" is not text or json`,
    concurrency === undefined && `--concurrency: "${values.concurrency}" is not a positive integer`,
    qps === undefined && `--qps: "${values.qps}" is not a positive integer`,
  ].filter((p): p is string => typeof p === 'string');
  if (problems.length > 0 || typeof target === 'string' || concurrency === undefined || qps === undefined) {
    console.error(`kubeloop diff: ${problems.join('; ')}\n\n${USAGE}`);
    return 2;
  }

  const started = performance.now();
  let apiCalls = 0;
  const endpoints: FunctionEndpoint[] = [];
  let admin: KubeClient | undefined;
  const onProgress = progressLine(values.progress === true || process.stderr.isTTY === true);
  try {
    let kubeConfig: ClusterCredentials;
    try {
      kubeConfig = await loadKubeConfig(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {});
    } catch (error) {
      throw new DiffError(`kubeconfig: ${(error as Error).message}`);
    }
    const rateLimit = { qps, burst: qps * 2 };
    admin = await KubeClient.fromKubeConfig(kubeConfig, { rateLimit, onRequest: () => apiCalls++ });
    const candidateVersion = await loadVersion(values.function!, '--function', target.kind === 'hook');
    const seconds = () => ((performance.now() - started) / 1000).toFixed(1);

    if (target.kind === 'loop') {
      const config = await readLoop(admin, target);
      const baselineSource = values.baseline ?? config.functionUrl;
      if (!baselineSource) throw new DiffError(`${loopTitle(config)} names its function by spec.function.ref, which only the router resolves: give --baseline MODULE|URL`);
      const baselineVersion = await loadVersion(baselineSource, '--baseline', false);
      const state = await readLoopState(admin, config, rateLimit);
      // Modules served here sign with the Loop's key, as its deployed function does.
      const candidate = await candidateVersion(state.signingKey);
      endpoints.push(candidate);
      const baseline = await baselineVersion(state.signingKey);
      endpoints.push(baseline);
      const reports = await diffLoop(state, { candidateUrl: candidate.url, baselineUrl: baseline.url, concurrency, now: new Date(), signingKey: state.signingKey, ...(onProgress ? { onProgress } : {}) });
      const summary = summarise(reports.map((r) => r.outcome));
      const shown = reports.filter((r) => r.outcome === 'changed' || r.outcome === 'error');
      if (output === 'json') console.log(JSON.stringify({ loop: identityOf(target), summary, apiCalls, seconds: Number(seconds()), objects: shown }, null, 2));
      else console.log(`${formatLoopReports(shown)}${summaryTable(summary, { 'API CALLS': apiCalls, SECONDS: seconds() })}`);
      return exitCodeOf(summary);
    }

    const hook = await readHook(admin, target);
    const candidate = await candidateVersion();
    endpoints.push(candidate);
    const baseline = await (await loadVersion(values.baseline ?? hook.functionUrl, '--baseline', true))();
    endpoints.push(baseline);
    let recorded;
    try {
      recorded = readRecordedAdmissions(values.requests!, hook, new Date());
    } catch (error) {
      throw new DiffError(`--requests: ${(error as Error).message}`);
    }
    const reports = await diffHook(recorded, { candidateUrl: candidate.url, baselineUrl: baseline.url, timeoutMs: hook.functionTimeoutMs, concurrency, ...(onProgress ? { onProgress } : {}) });
    const summary = summarise(reports.map((r) => r.outcome));
    const shown = reports.filter((r) => r.outcome !== 'unchanged');
    if (output === 'json') console.log(JSON.stringify({ hook: identityOf(target), summary, seconds: Number(seconds()), requests: shown }, null, 2));
    else console.log(`${formatHookReports(shown)}${summaryTable(summary, { SECONDS: seconds() })}`);
    return exitCodeOf(summary);
  } catch (error) {
    // Every failure here leaves the diff unanswered: exit 2, never 1 (which means "changes found").
    console.error(`kubeloop diff: ${error instanceof DiffError ? error.message : `failed: ${(error as Error).message}`}`);
    return 2;
  } finally {
    await Promise.all(endpoints.map((e) => e.close()));
    await admin?.close();
  }
}
