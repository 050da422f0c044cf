// `kubeloop replay <file-or-folder>... --to <url> | --function <module>`: POSTs recorded requests at a
// function, prints PASS/FAIL per case as it finishes with a path-level diff, and exits 1 on any mismatch or
// transport error. --update rewrites the recorded responses that differ (after a deliberate change) and
// records the response of a fixture written by hand with its request only.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { formatDifferences, replayFiles, type FileReplayResult, type ReplayMode } from '../../lib/replay/index.ts';
import { serveForTest, type TestServer } from '../../lib/testing/serve.ts';
import { CaseProgress, type CaseLine } from '../case-progress.ts';
import { historyCases, replayHistoryCase } from '../history/replay-history.ts';
import { parseCommandArgs } from '../command-args.ts';
import { builtinFunctionsHelp } from '../command-list.ts';
import { FunctionModuleError, loadFunctionByNameOrPath } from '../function-module.ts';
import { readSigningFlags, SIGNING_FLAG_OPTIONS, SIGNING_FLAGS_HELP } from '../signing-flags.ts';

const USAGE = `usage: kubeloop replay [<file-or-folder>...] [--history FILE]... (--to <url> | --function <name|module>) [--update]
                       [--mode json|binary|structured|batch-json|batch-cloudevents] [--timeout-ms 10000] [--strict]
                       [--signing-secret whsec_... | --signing-secret-file PATH]

Each file is <folder>/<case>.json = { "description", "request", "response" }; a folder means every *.json
directly inside it. A patch passes when it has the recorded patch's effect on the recorded object (same
result, same resourceVersion test); an event when its type and reason match (its message too with --strict).
  --to URL             a running function (kubeloop function, a container, a FaaS URL)
  --function MODULE    serve this module (default export defineFunction(...)) or built-in name in-process
  --history FILE       a flight-recorder entry as a fixture (kubeloop history -o json > FILE, or a history file
                       the router wrote with --history-dir: each entry keeping its request): the request is
                       sent again and passes when the function asks for the same actions (repeatable)
  --mode batch-json, batch-cloudevents  send a folder's reconcile fixtures together, as batches (docs/contract.md, "Batches")
  --strict             compare event messages verbatim too
  --update             write the function's reply into each fixture whose recorded response differs or
                       that has a request only, printing it (review it with git diff before committing)
${SIGNING_FLAGS_HELP}
Exit code: 0 all passed (or updated), 1 a mismatch or error, 2 bad usage or a missing file.
${builtinFunctionsHelp()}`;

/** The fixture file with its response replaced, in the two-space JSON the fixtures are written in. */
export function updatedFixtureText(originalText: string, response: unknown): string {
  const fixture = JSON.parse(originalText) as Record<string, unknown>;
  return `${JSON.stringify({ ...fixture, response }, null, 2)}\n`;
}

/** What to print for one case, writing its fixture first when --update records or re-records it. */
export function caseLine(result: FileReplayResult, update: boolean): CaseLine {
  if (result.outcome === 'invalid') return { status: 'FAIL', title: result.file, detail: `    ${result.message}` };
  const title = `${result.file}  ${result.fixture.description}`;
  if (result.outcome === 'unrecorded') {
    if (!result.reply.ok) return { status: 'FAIL', title, detail: `    ${result.reply.message}` };
    if (!update) return { status: 'FAIL', title, detail: '    no recorded "response" yet: run again with --update to record the reply (review it before committing)' };
    writeFileSync(result.file, updatedFixtureText(readFileSync(result.file, 'utf8'), result.reply.response));
    return { status: 'RECORDED', title, detail: `    ${JSON.stringify(result.reply.response)}` };
  }
  if (result.outcome === 'pass') return { status: 'PASS', title };
  if (result.outcome === 'error') return { status: 'FAIL', title, detail: `    ${result.message}` };
  if (!update) return { status: 'FAIL', title, detail: formatDifferences(result.differences) };
  writeFileSync(result.file, updatedFixtureText(readFileSync(result.file, 'utf8'), result.actual));
  return { status: 'UPDATED', title, detail: formatDifferences(result.differences) };
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'replay',
    argv,
    { to: { type: 'string' }, function: { type: 'string' }, history: { type: 'string', multiple: true }, update: { type: 'boolean' }, mode: { type: 'string' }, 'timeout-ms': { type: 'string' }, strict: { type: 'boolean' }, ...SIGNING_FLAG_OPTIONS },
    USAGE,
  );
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values, positionals } = parsed;
  const mode = (values.mode ?? 'json') as ReplayMode;
  const timeoutMs = Number(values['timeout-ms'] ?? 10_000);
  const signing = readSigningFlags(values);
  const problems = [
    !signing.ok && signing.message,
    !values.to && !values.function && '--to <url> or --function <module> is required',
    values.to && values.function && 'give either --to or --function, not both',
    values.to && !/^https?:\/\//.test(values.to) && `--to: "${values.to}" is not an http(s) URL`,
    positionals.length === 0 && !values.history && 'give at least one fixture file or folder (or --history FILE)',
    values.history && values.update && '--update rewrites fixtures; a history entry is not one',
    !['json', 'binary', 'structured', 'batch-json', 'batch-cloudevents'].includes(mode) && `--mode: "${mode}" is not one of json, binary, structured, batch-json, batch-cloudevents`,
    !(Number.isInteger(timeoutMs) && timeoutMs > 0) && `--timeout-ms: "${values['timeout-ms']}" is not a positive integer`,
    // A file that is not there is a mistake in the command line (exit 2), as in `kubeloop render`.
    ...[...positionals, ...(values.history ?? [])].filter((target) => !existsSync(target)).map((target) => `${target}: no such file or folder`),
  ].filter((p): p is string => typeof p === 'string');
  if (problems.length > 0) {
    console.error(`kubeloop replay: ${problems.join('; ')}\n\n${USAGE}`);
    return 2;
  }

  let server: TestServer | undefined;
  if (values.function) {
    try {
      // With a secret, the in-process function checks and signs as a deployed one would.
      const secret = signing.ok ? signing.secret : undefined;
      server = await serveForTest(await loadFunctionByNameOrPath(values.function), secret === undefined ? {} : { signingSecret: secret });
    } catch (error) {
      if (!(error instanceof FunctionModuleError)) throw error;
      console.error(`kubeloop replay: --function: ${error.message}`);
      return 2;
    }
  }
  try {
    const url = values.to ?? `${server?.url ?? ''}/`;
    const signingKeys = signing.ok ? signing.keys : undefined;
    const progress = new CaseProgress();
    const options = { url, mode, timeoutMs, strict: values.strict === true, ...(signingKeys ? { signingKeys } : {}) };
    if (positionals.length > 0) await replayFiles(positionals, { ...options, onResult: (result) => progress.report(caseLine(result, values.update === true)) });
    for (const file of values.history ?? []) {
      const loaded = historyCases(file);
      if ('problem' in loaded) progress.report({ status: 'FAIL', title: file, detail: `    ${loaded.problem}` });
      else for (const c of loaded.cases) progress.report(await replayHistoryCase(c, options));
    }
    return progress.finish();
  } finally {
    await server?.close();
  }
}
