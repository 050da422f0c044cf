// Recorded fixtures (the webhook gateway's --record) hold whole objects, Secrets' data included.
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFixture, type Fixture } from './fixtures.ts';

describe('writeFixture', () => {
  it('writes fixtures readable by the owner only (0600), in a 0700 directory it creates', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'kubeloop-fixture-')), 'recorded');
    const fixture = { description: 'a Secret', request: { kind: 'Secret' }, response: {} } as unknown as Fixture;
    const file = writeFixture(dir, 'hook/secret 1', fixture);
    expect(file).toBe(join(dir, 'hook_secret_1.json'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});
