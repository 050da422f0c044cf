// `kubeloop history --file`: one object's entries from the rotated history files a router wrote, offline.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectHistory } from '../../router/history/history-documents.ts';
import { HISTORY_FILE, HistoryFileWriter } from '../../router/history/history-files.ts';
import type { ReconcileRecord } from '../../router/reconcile/flight-recorder.ts';
import { captureCommand } from '../../test/http/capture-console.ts';
import { run } from './history.ts';

const entry = (outcome: string, startedAt: string): ReconcileRecord => ({
  startedAt,
  triggers: [{ source: 'primary', type: 'MODIFIED', kind: 'ConfigMap', object: 'team-a/web', resourceVersion: '42', at: 0 }],
  actions: ['patch v1/ConfigMap team-a/web'],
  writes: [{ action: 'patch v1/ConfigMap team-a/web', result: outcome === 'ok' ? 'applied' : 'conflict', ms: 3 }],
  outcome,
  durations: { queueMs: 1, callMs: 2, applyMs: 3, totalMs: 6 },
});

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'history-cli-'));
  // Small files: the three entries of web end up in two of them.
  const writer = new HistoryFileWriter({ dir, maxBytes: 4096, files: 3 }, { router: 'router-a', logger: pino({ level: 'silent' }), kindOf: () => ({ apiVersion: 'v1', kind: 'ConfigMap' }) });
  writer.offer('team-a/echo', 'team-a/web', entry('conflict', '2026-01-01T00:00:01.000Z'));
  await writer.flush();
  for (let i = 0; i < 8; i++) writer.offer('team-a/echo', `team-a/other-${i}`, entry('ok', '2026-01-01T00:00:02.000Z'));
  await writer.flush();
  writer.offer('team-a/echo', 'team-a/web', entry('ok', '2026-01-01T00:00:03.000Z'));
  writer.offer('echo', 'team-a/web', entry('ok', '2026-01-01T00:00:04.000Z'));
  await writer.close();
  expect(readdirSync(dir).length).toBeGreaterThan(1);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const history = (...args: string[]) => captureCommand(run, args);

describe('kubeloop history --file', () => {
  it('shows one object\'s entries of one Loop across the rotated files, oldest first', async () => {
    const result = await history('--file', dir, '--loop', 'echo', '-n', 'team-a', 'web', '-o', 'json');
    expect(result.code).toBe(0);
    // Nothing but the document: no line on stderr.
    const shown = JSON.parse(result.output) as ObjectHistory;
    expect(shown).toMatchObject({ kind: 'ObjectHistory', loop: 'team-a/echo', servedBy: 'router-a', object: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'web' } });
    // The ClusterLoop echo's entry for the same object is another Loop's.
    expect(shown.entries.map((e) => e.outcome)).toEqual(['conflict', 'ok']);
  });

  it('prints the timeline as text, and says so when the files hold nothing of the object', async () => {
    const text = await history('--file', dir, 'team-a/echo', 'team-a/web');
    expect(text.code).toBe(0);
    expect(text.output).toContain('ConfigMap team-a/web, Loop team-a/echo, router router-a: 2 reconciles, oldest first');
    expect(text.output).toContain('patch v1/ConfigMap team-a/web -> conflict (3ms)');
    const none = await history('--file', join(dir, HISTORY_FILE), '--cluster-loop', 'echo', '-n', 'team-a', 'db');
    expect(none.code).toBe(0);
    expect(none.output).toContain('no reconcile recorded');
    expect(none.output).toMatch(/no entry of Loop echo for team-a\/db in 1 file \(\d+ entries of Loops .*echo/);
  });
});
