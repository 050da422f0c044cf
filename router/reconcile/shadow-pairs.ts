// The fixture pairs of a shadow's divergences: for each, the request with the live answer and with the
// shadow's (lib/replay's fixture format, so `kubeloop replay` runs either against a function), in
// <dir>/<loop>/, keeping the newest `maxPairs` pairs per Loop. Files may hold Secrets' data: owner-only.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';
import { writeFixture } from '../../lib/replay/fixtures.ts';

export const DEFAULT_MAX_SHADOW_PAIRS = 50;

export class ShadowPairs {
  readonly #written = new Map<string, string[][]>();
  #sequence = 0;

  constructor(
    readonly dir: string,
    readonly maxPairs = DEFAULT_MAX_SHADOW_PAIRS,
  ) {}

  /** Writes one pair; returns its two files. `loopId` names the Loop's folder (a namespaced Loop's is ns/name). */
  record(loopId: string, request: ReconcileRequest, live: ReconcileResponse, shadow: ReconcileResponse, differences: string): string[] {
    this.#sequence += 1;
    const object = request.object.metadata;
    const who = `${request.object.kind} ${object?.namespace ? `${object.namespace}/` : ''}${object?.name ?? ''}`;
    const folder = join(this.dir, loopId.replace(/[^a-zA-Z0-9.-]/g, '_'));
    const name = `${Date.now()}-${String(this.#sequence).padStart(5, '0')}-${object?.name ?? 'object'}`;
    const files = [
      writeFixture(folder, `${name}.live`, { description: `${request.loop}: the live version's answer for ${who}, where the shadow's differs (${differences})`.slice(0, 2000), request, response: live }),
      writeFixture(folder, `${name}.shadow`, { description: `${request.loop}: the shadow's answer for ${who}, which differs from the live one (${differences})`.slice(0, 2000), request, response: shadow }),
    ];
    const kept = this.#written.get(loopId) ?? [];
    kept.push(files);
    for (const old of kept.splice(0, Math.max(0, kept.length - this.maxPairs))) for (const file of old) rmSync(file, { force: true });
    this.#written.set(loopId, kept);
    return files;
  }
}
