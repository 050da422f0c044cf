// `kubeloop replay <file-or-folder>... --to <url>`: POSTs recorded requests at a running function,
// prints PASS/FAIL per case with a path-level diff, and exits 1 on any mismatch or transport error.
import { parseArgs } from 'node:util';
import { formatDifferences, loadFixtures, replayFixture, type ReplayMode } from '../../lib/replay/index.ts';

const USAGE = `usage: kubeloop replay <file-or-folder>... --to <url> [--mode json|binary|structured] [--timeout-ms 10000] [--strict]

Each file is test/fixtures/<function>/<case>.json = { "description", "request", "response" }; a folder
means every *.json directly inside it. A patch passes when it has the recorded patch's effect on the
recorded object (same result, same resourceVersion test); an event when its type and reason match (its
message too with --strict). Exit code: 0 all passed, 1 a mismatch or error, 2 bad usage.`;

export async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { to: { type: 'string' }, mode: { type: 'string' }, 'timeout-ms': { type: 'string' }, strict: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    console.error(`kubeloop replay: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const mode = (values.mode ?? 'json') as ReplayMode;
  const timeoutMs = Number(values['timeout-ms'] ?? 10_000);
  const problems = [
    !values.to && '--to <url> is required',
    values.to && !/^https?:\/\//.test(values.to) && `--to: "${values.to}" is not an http(s) URL`,
    positionals.length === 0 && 'give at least one fixture file or folder',
    !['json', 'binary', 'structured'].includes(mode) && `--mode: "${mode}" is not one of json, binary, structured`,
    !(Number.isInteger(timeoutMs) && timeoutMs > 0) && `--timeout-ms: "${values['timeout-ms']}" is not a positive integer`,
  ].filter((p): p is string => typeof p === 'string');
  if (problems.length > 0 || !values.to) {
    console.error(`kubeloop replay: ${problems.join('; ')}\n\n${USAGE}`);
    return 2;
  }

  let passed = 0;
  let failed = 0;
  for (const target of positionals) {
    let fixtures;
    try {
      fixtures = loadFixtures(target);
    } catch (error) {
      console.log(`FAIL ${target}\n    cannot read: ${(error as Error).message}`);
      failed++;
      continue;
    }
    if (fixtures.length === 0) {
      console.log(`FAIL ${target}\n    no *.json fixtures in this folder`);
      failed++;
    }
    for (const loaded of fixtures) {
      if (!loaded.ok) {
        console.log(`FAIL ${loaded.file}\n    invalid fixture: ${loaded.error}`);
        failed++;
        continue;
      }
      const result = await replayFixture(loaded.fixture, { url: values.to, mode, timeoutMs, strict: values.strict === true });
      if (result.outcome === 'pass') {
        console.log(`PASS ${loaded.file}  ${loaded.fixture.description}`);
        passed++;
      } else {
        failed++;
        const detail = result.outcome === 'error' ? `    ${result.message}` : formatDifferences(result.differences);
        console.log(`FAIL ${loaded.file}  ${loaded.fixture.description}\n${detail}`);
      }
    }
  }
  console.log(`\n${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}
