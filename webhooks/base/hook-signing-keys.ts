// The signing keys of AdmissionHooks (spec.function.signingSecretRef), read by the gateway and kept for a
// few seconds, so a rotated key is used within `ttlMs` without a watch per hook, and a hook whose Secret
// is missing or wrong is never called unsigned.
import type { SecretKeyRef } from '../../api/loop.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { readSigningKeys, SigningSecretError } from '../../lib/signing/secret-keys.ts';
import type { SigningKeys } from '../../lib/signing/webhook-signature.ts';

export type HookKeys = { ok: true; keys: SigningKeys | undefined } | { ok: false; message: string };

export class HookSigningKeys {
  readonly #cache = new Map<string, { at: number; keys: Promise<HookKeys> }>();

  constructor(
    private readonly client: KubeClient,
    private readonly ttlMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The hook's keys; `keys: undefined` when its calls are not signed. */
  get(ref: SecretKeyRef | undefined): Promise<HookKeys> {
    if (!ref) return Promise.resolve({ ok: true, keys: undefined });
    const id = `${ref.namespace}/${ref.name}/${ref.key}`;
    const hit = this.#cache.get(id);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.keys;
    const keys = readSigningKeys(this.client, ref, 'the admission gateway').then(
      (found): HookKeys => ({ ok: true, keys: found }),
      (error: unknown): HookKeys => {
        this.#cache.delete(id);
        if (error instanceof SigningSecretError) return { ok: false, message: error.message };
        return { ok: false, message: `signing Secret ${ref.namespace}/${ref.name} could not be read (${(error as Error).message})` };
      },
    );
    this.#cache.set(id, { at: this.now(), keys });
    return keys;
  }
}
