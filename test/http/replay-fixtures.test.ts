// Every test/fixtures/<function>/ folder whose name is a registered function is replayed over real HTTP
// against that function, one test per recorded case (functions/fixtures.test.ts checks the same files in-process).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { admissionRegistry, functionRegistry, loadAnyFunction } from '../../functions/registry.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { formatDifferences, loadFixtures, replayFixture, type Fixture, type ReplayResult } from '../../lib/replay/index.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const logger = createLogger({ name: 'test', level: 'silent' });

const functionFolders = existsSync(FIXTURES)
  ? readdirSync(FIXTURES)
      .filter((name) => statSync(join(FIXTURES, name)).isDirectory() && (name in functionRegistry || name in admissionRegistry))
      .sort()
  : [];

function explain(result: ReplayResult): string {
  if (result.outcome === 'error') return result.message;
  if (result.outcome === 'mismatch') return `reply differs from the recording:\n${formatDifferences(result.differences)}`;
  return '';
}

const servers: ServedFunction[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function serve(name: string): Promise<ServedFunction> {
  const served = await serveFunction(await loadAnyFunction(name), { port: 0, host: '127.0.0.1', logger });
  servers.push(served);
  return served;
}

if (functionFolders.length === 0) {
  describe.skip('recorded events of registered functions (no test/fixtures/<function>/ folder yet)', () => {
    it('replays nothing', () => {});
  });
}

for (const name of functionFolders) {
  describe(`${name}: recorded events replayed over HTTP`, () => {
    const loaded = loadFixtures(join(FIXTURES, name));
    let served: Promise<ServedFunction> | undefined;
    const url = async () => `${(await (served ??= serve(name))).url}/`;

    it('has at least one recorded case', () => {
      expect(loaded.length).toBeGreaterThan(0);
    });

    it.each(loaded.map((l) => [l.name, l] as const))('%s', async (_case, fixture) => {
      if (!fixture.ok) throw new Error(`${fixture.file}: ${fixture.error}`);
      const result = await replayFixture(fixture.fixture, { url: await url() });
      expect(result.outcome, explain(result)).toBe('pass');
    });

    it('fails when a recorded response is tampered with (the replay check can fail)', async () => {
      const first = loaded.find((l): l is typeof l & { ok: true; fixture: Fixture } => l.ok);
      if (!first) throw new Error('no valid fixture to tamper with');
      const tampered = {
        ...first.fixture,
        response: { ...first.fixture.response, requeueAfterSeconds: 12345 },
      } as Fixture;
      const result = await replayFixture(tampered, { url: await url() });
      expect(result.outcome).toBe('mismatch');
      expect(explain(result)).toContain('/requeueAfterSeconds');
    });
  });
}
