// Replays reconcile fixtures as batches (`kubeloop replay --mode batch-json|batch-cloudevents`): the
// requests of one Loop (one signing audience) go together, up to MAX_BATCH_ITEMS per HTTP request, and each
// item's answer is checked and compared on its own, as the router takes them.
import { request } from 'undici';
import { encodeBatchRequest, MAX_BATCH_ITEMS, splitBatchReply, type BatchFormat } from '../contract/batch.ts';
import type { ReconcileRequest } from '../contract/types.ts';
import { audienceOf, signRequest, verifyReply } from '../signing/webhook-signature.ts';
import { responseValidatorFor } from './fixtures.ts';
import type { CallResult, ReplayOptions } from './replay-client.ts';

/** The reply to each request, in order; requests of different Loops go in different batches. */
export async function callBatched(requests: readonly ReconcileRequest[], options: ReplayOptions): Promise<CallResult[]> {
  const results: CallResult[] = new Array(requests.length);
  const groups = new Map<string, number[]>();
  requests.forEach((sent, i) => groups.set(audienceOf(sent), [...(groups.get(audienceOf(sent)) ?? []), i]));
  for (const [audience, indexes] of groups) {
    for (let start = 0; start < indexes.length; start += MAX_BATCH_ITEMS) {
      const chunk = indexes.slice(start, start + MAX_BATCH_ITEMS);
      const answers = await sendBatch(chunk.map((i) => requests[i]!), audience, options);
      chunk.forEach((i, k) => (results[i] = answers[k]!));
    }
  }
  return results;
}

async function sendBatch(requests: ReconcileRequest[], audience: string, options: ReplayOptions): Promise<CallResult[]> {
  const format: BatchFormat = options.mode === 'batch-json' ? 'json' : 'cloudevents';
  // Recorded ids may repeat across fixtures; a batch needs them unique.
  const items = requests.map((sent, i) => ({ request: { ...sent, reconcileId: `${sent.reconcileId ?? 'replay'}.${i}` } }));
  const ids = items.map((item) => item.request.reconcileId);
  const { contentType, body } = encodeBatchRequest(format, items, '/kubeloop/replay');
  const signed = options.signingKeys ? signRequest(options.signingKeys, audience, body) : undefined;
  const timeout = options.timeoutMs ?? 10_000;
  const all = (message: string): CallResult[] => requests.map(() => ({ ok: false, message }));
  let status: number;
  let text: string;
  let headers: Record<string, string | string[] | undefined>;
  try {
    const reply = await request(options.url, { method: 'POST', headers: { 'content-type': contentType, ...signed }, body, headersTimeout: timeout, bodyTimeout: timeout });
    ({ statusCode: status, headers } = reply);
    text = await reply.body.text();
  } catch (error) {
    return all(`POST ${options.url} (a batch of ${requests.length}) failed: ${(error as Error).message}`);
  }
  if (status !== 200) return all(`HTTP ${status} to a batch of ${requests.length}: ${text.slice(0, 500)}`);
  if (signed && options.signingKeys) {
    const verdict = verifyReply(options.signingKeys, audience, signed['webhook-id'], headers, text);
    if (!verdict.ok) return all(`batch reply signature refused: ${verdict.message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return all(`batch reply is not JSON: ${text.slice(0, 200)}`);
  }
  const split = splitBatchReply(format, ids, parsed);
  if (!(split instanceof Map)) return all(`${split.notBatch} (does the function answer batches?)`);
  return requests.map((sent, i): CallResult => {
    const item = split.get(ids[i]!)!;
    if (item.kind === 'invalid') return { ok: false, message: item.message };
    if (item.kind === 'error') return { ok: false, message: `batch item answered ${item.error.statusCode} ${item.error.code}: ${item.error.message}` };
    const checked = responseValidatorFor(sent)(item.value);
    if (!checked.ok) return { ok: false, message: `batch item reply is not a valid ReconcileResponse: ${checked.errors.join('; ')}` };
    return { ok: true, response: checked.value };
  });
}
