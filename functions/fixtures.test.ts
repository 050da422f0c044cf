// Fast check of test/fixtures/<function>/*.json: each recorded request, given to the registered function
// in-process, yields exactly the recorded response (test/http/ replays the same files over HTTP).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateReconcileRequest, validateReconcileResponse } from '../lib/contract/validate.ts';
import { functionRegistry, loadFunction } from './registry.ts';

const FIXTURES = fileURLToPath(new URL('../test/fixtures/', import.meta.url));

interface Fixture {
  description: string;
  request: unknown;
  response: unknown;
}

function fixturesOf(name: string): Array<[string, Fixture]> {
  const dir = join(FIXTURES, name);
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => [file, JSON.parse(readFileSync(join(dir, file), 'utf8')) as Fixture]);
}

for (const name of Object.keys(functionRegistry).sort()) {
  describe(`${name} recorded requests`, () => {
    const fixtures = fixturesOf(name);

    it('has recorded requests', () => {
      expect(fixtures.length).toBeGreaterThan(0);
    });

    it.each(fixtures)('%s', async (_file, fixture) => {
      expect(fixture.description, 'every fixture says what it shows').toMatch(/\S/);
      const request = validateReconcileRequest(fixture.request);
      if (!request.ok) throw new Error(`recorded request is invalid:\n${request.errors.join('\n')}`);
      const recorded = validateReconcileResponse(fixture.response);
      if (!recorded.ok) throw new Error(`recorded response is invalid:\n${recorded.errors.join('\n')}`);
      const fn = await loadFunction(name);
      expect(fn.reconcile(request.value)).toEqual(recorded.value);
    });
  });
}
