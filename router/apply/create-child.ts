// Creates a child exactly once even when the answer is lost. A generateName is resolved here, as the API
// server would, so a create whose response was cut can be sent again under the same name: AlreadyExists
// then proves the first attempt landed. Without a name, a lost answer left an unknown pod the owner's
// expectations could not wait for, and a PodSet reconciled again on a lagging cache created one too many.
import { randomInt } from 'node:crypto';
import type { KubeObject } from '../../lib/contract/types.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { mayHaveTakenEffect, retryTransient } from '../../lib/kube/transient.ts';

/** The API server's alphabet for generated names: no vowels, no look-alike characters. */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** The API server keeps 5 random characters within a 63-character name. */
const MAX_BASE = 58;

export function generatedName(base: string, random: (n: number) => number = randomInt): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += ALPHABET[random(ALPHABET.length)];
  return base.slice(0, MAX_BASE) + suffix;
}

/** The object with a concrete name when it asks only for a generateName. */
export function withConcreteName<T extends KubeObject>(object: T, random?: (n: number) => number): T {
  const generateName = object.metadata?.generateName;
  if (object.metadata?.name || !generateName) return object;
  return { ...object, metadata: { ...object.metadata, name: generatedName(generateName, random) } };
}

/** A create that failed after an attempt that may have landed: the caller must expect the child anyway. */
export class UncertainCreateError extends Error {
  constructor(override readonly cause: unknown) {
    super(`create may have landed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'UncertainCreateError';
  }
}

export type CreateOutcome = { result: 'created'; object: KubeObject } | { result: 'exists' };

/**
 * POSTs a named object, sending it again after transient failures for up to `retryMs`. AlreadyExists is
 * 'exists' (an earlier attempt, or an earlier reconcile, got through). When the last failure leaves the
 * outcome open and an attempt may have landed, throws UncertainCreateError.
 */
export async function createOnce(client: KubeClient, path: string, object: KubeObject, retryMs: number, headers?: Record<string, string>): Promise<CreateOutcome> {
  let uncertain = false;
  try {
    const created = await retryTransient(
      async () => {
        try {
          return await client.request<KubeObject>({ method: 'POST', path, body: object, ...(headers ? { headers } : {}) });
        } catch (error) {
          uncertain ||= mayHaveTakenEffect(error);
          throw error;
        }
      },
      { timeoutMs: retryMs },
    );
    return { result: 'created', object: created };
  } catch (error) {
    if (isApiError(error, 409) && error.reason === 'AlreadyExists') return { result: 'exists' };
    throw uncertain ? new UncertainCreateError(error) : error;
  }
}
