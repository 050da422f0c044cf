// `--record <dir>`: writes every request and response as a fixture in the test/fixtures format
// ({ description, request, response }), which is how recorded events used in tests are captured.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';

export interface Fixture {
  description: string;
  request: ReconcileRequest;
  response: ReconcileResponse;
}

export class FixtureRecorder {
  #sequence = 0;
  constructor(private readonly dir: string) {
    // Recorded objects may hold Secrets' data and pod environments: readable by the owner only.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  record(request: ReconcileRequest, response: ReconcileResponse): string {
    this.#sequence += 1;
    const object = request.object.metadata;
    const who = `${object?.namespace ? `${object.namespace}/` : ''}${object?.name ?? ''}`;
    const fixture: Fixture = {
      description: `${request.loop}: ${request.trigger.type} of ${request.object.kind} ${who} (recorded ${request.now})`,
      request,
      response,
    };
    const safe = `${request.loop}-${Date.now()}-${String(this.#sequence).padStart(5, "0")}-${(object?.name ?? 'object').replace(/[^a-zA-Z0-9.-]/g, '_')}`;
    const file = join(this.dir, `${safe}.json`);
    writeFileSync(file, `${JSON.stringify(fixture, null, 2)}\n`, { mode: 0o600 });
    return file;
  }
}
