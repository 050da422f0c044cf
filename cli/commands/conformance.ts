// `kubeloop conformance <url>`: checks a running function, in any language, against what every kubeloop
// function must do (status and error codes, the three encodings, probes, signing) and its recorded
// fixtures; prints each case as it finishes, then a table. Exit 0 all passed, 1 a failure, 2 bad usage.
import { existsSync } from 'node:fs';
import { DEFAULT_BODY_LIMIT_BYTES } from '../../lib/server/create-server.ts';
import { audienceOf } from '../../lib/signing/webhook-signature.ts';
import { parseCommandArgs } from '../command-args.ts';
import { defaultSampleRequest } from '../conformance/cases.ts';
import { formatResultLine, formatTable, readFixtureFolder, runConformance } from '../conformance/run-conformance.ts';
import { readSigningFlags, SIGNING_FLAG_OPTIONS, SIGNING_FLAGS_HELP } from '../signing-flags.ts';

const USAGE = `usage: kubeloop conformance <url> [--fixtures DIR] [--signing-secret whsec_... | --signing-secret-file PATH]
                            [--body-limit-bytes ${DEFAULT_BODY_LIMIT_BYTES}] [--timeout-ms 10000]

<url> is where the function takes POSTs (http://localhost:8080/, or .../reconcile, .../admit); its probes
are checked on the same origin. Cases: 200 with a valid reply and the id echoed; 415, 400 (bad JSON, empty
body, schema, apiVersion), 413, 405 with the contract's error codes; /healthz and /readyz; CloudEvents binary
and structured mode with the reply event dev.kubeloop.reconcile.response.v1, batches and other event types
refused; with a secret, 401 for unsigned, forged, lifted, stale and future signatures, and signed replies.
  --fixtures DIR       also replay these recorded cases (a folder or one file); the first one's request is
                       the sample for the cases above (default: a plain Pod; an AdmissionRequest for it when
                       <url> ends in /admit). An admission function must answer every CloudEvent with 415
  --body-limit-bytes N the function's body limit (KUBELOOP_BODY_LIMIT_BYTES), for the 413 case
  --timeout-ms N       per request
${SIGNING_FLAGS_HELP}
Exit code: 0 every case passed, 1 a case failed, 2 bad usage.`;

const positiveInteger = (text: string | undefined, fallback: number): number => (text === undefined ? fallback : Number(text));

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'conformance',
    argv,
    { fixtures: { type: 'string' }, 'body-limit-bytes': { type: 'string' }, 'timeout-ms': { type: 'string' }, ...SIGNING_FLAG_OPTIONS },
    USAGE,
  );
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values, positionals } = parsed;
  const [url, ...extra] = positionals;
  const bodyLimitBytes = positiveInteger(values['body-limit-bytes'], DEFAULT_BODY_LIMIT_BYTES);
  const timeoutMs = positiveInteger(values['timeout-ms'], 10_000);
  const signing = readSigningFlags(values);
  const problems = [
    url === undefined && 'give the function URL',
    extra.length > 0 && `unexpected arguments: ${extra.join(' ')}`,
    url !== undefined && !/^https?:\/\/[^/]/.test(url) && `"${url}" is not an http(s) URL`,
    !(Number.isInteger(bodyLimitBytes) && bodyLimitBytes > 0) && `--body-limit-bytes: "${values['body-limit-bytes']}" is not a positive integer`,
    !(Number.isInteger(timeoutMs) && timeoutMs > 0) && `--timeout-ms: "${values['timeout-ms']}" is not a positive integer`,
    values.fixtures !== undefined && !existsSync(values.fixtures) && `--fixtures: "${values.fixtures}" does not exist`,
    !signing.ok && signing.message,
  ].filter((p): p is string => typeof p === 'string');
  if (problems.length > 0 || url === undefined || !signing.ok) {
    console.error(`kubeloop conformance: ${problems.join('; ')}\n\n${USAGE}`);
    return 2;
  }
  const { fixtures, invalid } = values.fixtures === undefined ? { fixtures: [], invalid: [] } : readFixtureFolder(values.fixtures);
  if (values.fixtures !== undefined && fixtures.length === 0 && invalid.length === 0) {
    console.error(`kubeloop conformance: --fixtures: no *.json fixtures in "${values.fixtures}"`);
    return 2;
  }
  for (const result of invalid) console.log(formatResultLine(result));
  const sample = fixtures[0]?.fixture.request ?? defaultSampleRequest(url);
  const results = await runConformance({ url, timeoutMs, bodyLimitBytes, sample, audience: audienceOf(sample), ...(signing.keys ? { signingKeys: signing.keys } : {}) }, fixtures, (result) =>
    console.log(formatResultLine(result)),
  );
  const all = [...invalid, ...results];
  console.log(`\n${formatTable(all)}`);
  return all.some((r) => r.outcome === 'FAIL') ? 1 : 0;
}
