// npx tsx bench/signing-layer.bench.ts [repo root]: CPU per call of the function core, unsigned and signed
// (verify the request, sign the reply), in one process with alternating rounds: the signing layer's own
// cost without HTTP. Pass another checkout's root to compare against it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));
const { loadFunction } = await import(`${root}/functions/registry.ts`);
const { createFunctionCore } = await import(`${root}/lib/runtime/function-core.ts`);
const { withSigning } = await import(`${root}/lib/runtime/signed-core.ts`);
const signing = await import(`${root}/lib/signing/webhook-signature.ts`);
const { createLogger } = await import(`${root}/lib/observability/logger.ts`);

type Core = { handle(request: { headers: Record<string, string>; body: string }): { status: number; body: string } };
const fixture = JSON.parse(readFileSync(`${root}/test/fixtures/pod-name-label/adds-label-to-annotated-pod.json`, 'utf8')) as { request: unknown };
const body = JSON.stringify(fixture.request);
const secret: string = signing.generateSigningSecret();
const definition = await loadFunction('pod-name-label');
const logger = createLogger({ name: 'bench', level: 'silent' });
const plain: Core = createFunctionCore(definition, { logger });
const signed: Core = withSigning(createFunctionCore(definition, { logger }), { signingSecret: secret });
// signRequest (derived keys, audience) where the checkout has it; the older scheme signed with the secret itself.
const key = signing.parseSigningSecret(secret);
const headers = { 'content-type': 'application/json', ...(signing.signRequest ? signing.signRequest(key, 'loop/pod-name-label', body) : signing.signatureHeaders(key, body)) };

function cpuMicrosPerCall(core: Core, calls: number): number {
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const reply = core.handle({ headers, body });
    if (reply.status !== 200) throw new Error(`${reply.status} ${reply.body}`);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

cpuMicrosPerCall(plain, 2000);
cpuMicrosPerCall(signed, 2000);
const unsignedRuns: number[] = [];
const signedRuns: number[] = [];
for (let round = 0; round < 5; round++) {
  unsignedRuns.push(cpuMicrosPerCall(plain, 5000));
  signedRuns.push(cpuMicrosPerCall(signed, 5000));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[2]!;
const [u, s] = [median(unsignedRuns), median(signedRuns)];
console.log(`${root}\nunsigned ${u.toFixed(1)} us/call   signed ${s.toFixed(1)} us/call   signing layer +${(s - u).toFixed(1)} us/call (${(s / u).toFixed(2)}x), median of 5 rounds of 5,000 calls`);
