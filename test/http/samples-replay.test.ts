// The Python and Go pod-name-label samples pass the same recorded cases as the TypeScript function, over
// real HTTP: replay is the conformance check for a function written in any language (docs/contract.md).
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDifferences, loadFixtures, replayFixture, type Fixture, type ReplayMode, type ReplayResult } from '../../lib/replay/index.ts';
import { buildGoSample, PYTHON_POD_NAME_LABEL, startSample, type RunningSample } from './sample-processes.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/pod-name-label/', import.meta.url));
const cases = loadFixtures(FIXTURES).map((loaded) => {
  if (!loaded.ok) throw new Error(`${loaded.file}: ${loaded.error}`);
  return [loaded.name, loaded.fixture] as const;
});

function explain(result: ReplayResult): string {
  if (result.outcome === 'error') return result.message;
  return result.outcome === 'mismatch' ? formatDifferences(result.differences) : '';
}

const samples: Array<{ language: string; start: () => Promise<RunningSample> }> = [
  { language: 'Python', start: () => startSample('python3', [PYTHON_POD_NAME_LABEL]) },
  { language: 'Go', start: async () => startSample(await buildGoSample(), []) },
];

for (const sample of samples) {
  describe(`pod-name-label in ${sample.language} (samples/)`, () => {
    let running: RunningSample;
    // Building the Go sample on a busy machine takes a while; no test below waits on a clock.
    beforeAll(async () => {
      running = await sample.start();
    }, 180_000);
    afterAll(() => running?.stop());

    it.each(cases.flatMap(([name, fixture]) => (['json', 'binary'] as ReplayMode[]).map((mode) => [name, mode, fixture] as const)))(
      'replays %s (%s)',
      async (_name, mode, fixture: Fixture) => {
        const result = await replayFixture(fixture, { url: running.url, mode });
        expect(result.outcome, explain(result)).toBe('pass');
      },
    );

    it('words its Warning event its own way: only --strict tells the messages apart', async () => {
      const tooLong = cases.find(([name]) => name === 'warns-when-name-too-long-for-label')?.[1];
      if (!tooLong) throw new Error('fixture warns-when-name-too-long-for-label is missing');
      const strict = await replayFixture(tooLong, { url: running.url, strict: true });
      expect(strict.outcome).toBe('mismatch');
      expect(explain(strict)).toContain('"reason":"PodNameTooLong"');
    });

    it('answers a body that is not a ReconcileRequest with a 400 and a message', async () => {
      for (const body of ['{not json', JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest' })]) {
        const reply = await request(running.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        expect(reply.statusCode).toBe(400);
        const parsed = (await reply.body.json()) as { code: string; message: string };
        expect(parsed.message).toMatch(/ReconcileRequest|JSON/);
      }
      const wrongType = await request(running.url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
      expect(wrongType.statusCode).toBe(415);
      await wrongType.body.dump();
    });
  });
}
