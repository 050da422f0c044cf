// `kubeloop replay <file-or-folder>... --to <url> | --function <module>`: POSTs recorded requests at a
// function, prints PASS/FAIL per case with a path-level diff, and exits 1 on any mismatch or transport
// error. --update rewrites the recorded responses that differ (after a deliberate change) and prints the diff.
import { readFileSync, writeFileSync } from 'node:fs';
import { formatDifferences, replayFiles, type FileReplayResult, type ReplayMode } from '../../lib/replay/index.ts';
import { serveForTest, type TestServer } from '../../lib/testing/serve.ts';
import { parseCommandArgs } from '../command-args.ts';
import { builtinFunctionsHelp } from '../command-list.ts';
import { FunctionModuleError, loadFunctionByNameOrPath } from '../function-module.ts';
import { readSigningFlags, SIGNING_FLAG_OPTIONS, SIGNING_FLAGS_HELP } from '../signing-flags.ts';

const USAGE = `usage: kubeloop replay <file-or-folder>... (--to <url> | --function <name|module>) [--update]
                       [--mode json|binary|structured] [--timeout-ms 10000] [--strict]
                       [--signing-secret whsec_... | --signing-secret-file PATH]

Each file is <folder>/<case>.json = { "description", "request", "response" }; a folder means every *.json
directly inside it. A patch passes when it has the recorded patch's effect on the recorded object (same
result, same resourceVersion test); an event when its type and reason match (its message too with --strict).
  --to URL             a running function (kubeloop function, a container, a FaaS URL)
  --function MODULE    serve this module (default export defineFunction(...)) or built-in name in-process
  --strict             compare event messages verbatim too
  --update             write the function's reply into each fixture whose recorded response differs,
                       printing the difference (review it with git diff before committing)
${SIGNING_FLAGS_HELP}
Exit code: 0 all passed (or updated), 1 a mismatch or error, 2 bad usage.
${builtinFunctionsHelp()}`;

/** The fixture file with its response replaced, in the two-space JSON the fixtures are written in. */
export function updatedFixtureText(originalText: string, response: unknown): string {
  const fixture = JSON.parse(originalText) as Record<string, unknown>;
  return `${JSON.stringify({ ...fixture, response }, null, 2)}\n`;
}

function report(result: FileReplayResult, update: boolean): { line: string; ok: boolean } {
  if (result.outcome === 'invalid') return { line: `FAIL ${result.file}\n    ${result.message}`, ok: false };
  const title = `${result.file}  ${result.fixture.description}`;
  if (result.outcome === 'pass') return { line: `PASS ${title}`, ok: true };
  if (result.outcome === 'error') return { line: `FAIL ${title}\n    ${result.message}`, ok: false };
  if (!update) return { line: `FAIL ${title}\n${formatDifferences(result.differences)}`, ok: false };
  writeFileSync(result.file, updatedFixtureText(readFileSync(result.file, 'utf8'), result.actual));
  return { line: `UPDATED ${title}\n${formatDifferences(result.differences)}`, ok: true };
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'replay',
    argv,
    { to: { type: 'string' }, function: { type: 'string' }, update: { type: 'boolean' }, mode: { type: 'string' }, 'timeout-ms': { type: 'string' }, strict: { type: 'boolean' }, ...SIGNING_FLAG_OPTIONS },
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
    positionals.length === 0 && 'give at least one fixture file or folder',
    !['json', 'binary', 'structured'].includes(mode) && `--mode: "${mode}" is not one of json, binary, structured`,
    !(Number.isInteger(timeoutMs) && timeoutMs > 0) && `--timeout-ms: "${values['timeout-ms']}" is not a positive integer`,
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
    const results = await replayFiles(positionals, { url, mode, timeoutMs, strict: values.strict === true, ...(signingKeys ? { signingKeys } : {}) });
    let passed = 0;
    let updated = 0;
    let failed = 0;
    for (const result of results) {
      const { line, ok } = report(result, values.update === true);
      console.log(line);
      if (!ok) failed++;
      else if (line.startsWith('UPDATED')) updated++;
      else passed++;
    }
    console.log(`\n${passed} passed, ${failed} failed${values.update ? `, ${updated} updated` : ''}`);
    return failed === 0 ? 0 : 1;
  } finally {
    await server?.close();
  }
}
