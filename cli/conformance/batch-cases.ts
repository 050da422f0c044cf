// Conformance of batches (docs/contract.md, "Batches"): a function that advertises x-kubeloop-batch-max on
// its replies must answer a plain JSON batch and a CloudEvents batch item by item, a bad item with its own
// error and the others with valid replies; one that does not advertise must refuse a batch with a 4xx
// (the router then never sends it one). Admission functions take no batches.
import { randomUUID } from 'node:crypto';
import { advertisedBatchMax, BATCH_MAX_HEADER, encodeBatchRequest, splitBatchReply, type BatchFormat } from '../../lib/contract/batch.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { validateReconcileResponse } from '../../lib/contract/validate.ts';
import type { ConformanceCase, ConformanceContext } from './cases.ts';
import { CaseFailure, expectError, expectSuccess, header, parseJson, send } from './http-call.ts';

type Item = ReconcileRequest & { reconcileId: string };

const sampleWithId = (context: ConformanceContext): Item => ({ ...(context.sample as ReconcileRequest), reconcileId: `conformance-${randomUUID()}` });

/** The batch size the function advertises on a reply to the sample, or undefined. */
async function advertised(context: ConformanceContext): Promise<number | undefined> {
  const exchange = await send(context, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(sampleWithId(context)) });
  expectSuccess(context, exchange);
  return advertisedBatchMax(header(exchange, BATCH_MAX_HEADER));
}

function batchCase(format: BatchFormat): ConformanceCase {
  const refusals = format === 'json' ? ['InvalidRequest', 'UnsupportedApiVersion'] : ['UnsupportedMediaType', 'InvalidCloudEvent'];
  return {
    group: format === 'json' ? 'transport' : 'cloudevents',
    name: `${format === 'json' ? 'plain JSON' : 'CloudEvents'} batch: answered item by item (a bad item gets its own error) when ${BATCH_MAX_HEADER} is advertised, else 4xx`,
    async run(context) {
      const admission = context.sample.kind === 'AdmissionRequest';
      const max = admission ? undefined : await advertised(context);
      const good = [sampleWithId(context), sampleWithId(context)];
      const bad = { ...sampleWithId(context), object: undefined } as unknown as Item;
      const items = max === undefined ? good : [good[0]!, bad, good[1]!].slice(0, Math.max(2, max));
      const encoded = encodeBatchRequest(format, items.map((request) => ({ request })), '/kubeloop/conformance');
      const exchange = await send(context, { headers: { 'content-type': encoded.contentType }, body: encoded.body });
      if (max === undefined) {
        const note = expectError(exchange, '4xx', admission && format === 'cloudevents' ? ['UnsupportedMediaType'] : refusals);
        return `no ${BATCH_MAX_HEADER} on replies: batch refused, ${note}`;
      }
      expectSuccess(context, exchange);
      const type = (header(exchange, 'content-type') ?? '').split(';')[0]?.trim();
      const want = format === 'json' ? 'application/json' : 'application/cloudevents-batch+json';
      if (type !== want) throw new CaseFailure(`want content-type ${want} for a ${format} batch reply, got ${type ?? 'none'}`);
      const split = splitBatchReply(format, items.map((i) => i.reconcileId), parseJson(exchange, 'the batch reply'));
      if (!(split instanceof Map)) throw new CaseFailure(split.notBatch);
      for (const item of items) {
        const outcome = split.get(item.reconcileId)!;
        if (item === bad) {
          if (outcome.kind !== 'error' || outcome.error.statusCode !== 400) throw new CaseFailure(`the item without an object must get its own 400 error, got ${JSON.stringify(outcome)}`);
          continue;
        }
        if (outcome.kind !== 'response') throw new CaseFailure(`item ${item.reconcileId}: want a response, got ${JSON.stringify(outcome)}`);
        const checked = validateReconcileResponse(outcome.value);
        if (!checked.ok) throw new CaseFailure(`item ${item.reconcileId}: not a valid ReconcileResponse: ${checked.errors.join('; ')}`);
      }
      return `200, ${items.length} items answered one by one (advertises ${max})`;
    },
  };
}

export const BATCH_CASES: readonly ConformanceCase[] = [batchCase('json'), batchCase('cloudevents')];
