// Python and Go functions using related objects (samples/python|go/config-reloader) pass the recorded cases of
// the TypeScript config-reloader over real HTTP: request.related is part of what replay sends and checks.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { formatDifferences, loadFixtures, replayFixture, type Fixture, type ReplayMode } from '../../lib/replay/index.ts';
import { buildGoSample, startSample, type RunningSample } from './sample-processes.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/config-reloader/', import.meta.url));
const PYTHON_CONFIG_RELOADER = fileURLToPath(new URL('../../samples/python/config-reloader/config_reloader.py', import.meta.url));
const GO_CONFIG_RELOADER_DIR = fileURLToPath(new URL('../../samples/go/config-reloader/', import.meta.url));
/** Each language's sample started as a real process. */
const SAMPLES = [
  ['Python (samples/python/config-reloader)', () => startSample('python3', [PYTHON_CONFIG_RELOADER])],
  ['Go (samples/go/config-reloader)', async () => startSample(await buildGoSample(GO_CONFIG_RELOADER_DIR, 'config-reloader-go'), [])],
] as const;
const cases = loadFixtures(FIXTURES).map((loaded) => {
  if (!loaded.ok) throw new Error(`${loaded.file}: ${loaded.error}`);
  if (loaded.fixture.request.kind !== 'ReconcileRequest') throw new Error(`${loaded.file}: not a reconcile fixture`);
  return [loaded.name, loaded.fixture as Fixture & { request: ReconcileRequest }] as const;
});

describe.each(SAMPLES)('config-reloader in %s', (_language, start) => {
  let running: RunningSample;
  beforeAll(async () => {
    running = await start();
  }, 120_000);
  afterAll(() => running?.stop());

  it('has recorded cases with related objects', () => {
    expect(cases.some(([, f]) => (f.request.related?.config?.length ?? 0) > 0)).toBe(true);
  });

  it.each(cases.flatMap(([name, fixture]) => (['json', 'binary'] as ReplayMode[]).map((mode) => [name, mode, fixture] as const)))('replays %s (%s)', async (_name, mode, fixture: Fixture) => {
    const result = await replayFixture(fixture, { url: running.url, mode });
    expect(result.outcome, result.outcome === 'mismatch' ? formatDifferences(result.differences) : result.outcome === 'error' ? result.message : '').toBe('pass');
  });

  it('is told apart when it ignores the related object: a fixture whose ConfigMap is missing fails the replay', async () => {
    const [, rolls] = cases.find(([name]) => name === 'rolls-when-config-map-changes') ?? [];
    if (!rolls) throw new Error('fixture rolls-when-config-map-changes is missing');
    const without = { ...rolls, request: { ...rolls.request, related: { config: [] } } } as Fixture;
    expect((await replayFixture(without, { url: running.url })).outcome).toBe('mismatch');
  });
});
