import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { create, defineFunction, respond } from '../../lib/sdk/index.ts';
import { serveForTest, type TestServer } from '../../lib/testing/serve.ts';
import { HISTORY_FILE, HistoryFileWriter } from '../../router/history/history-files.ts';
import { compareActions, historyCases, replayHistoryCase } from './replay-history.ts';

const request: ReconcileRequest = {
  apiVersion: 'kubeloop.dev/v1',
  kind: 'ReconcileRequest',
  loop: 'podset',
  trigger: { type: 'MODIFIED' },
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'default', resourceVersion: '7', uid: 'u' } },
  children: {},
  now: '2026-01-01T00:00:00Z',
} as unknown as ReconcileRequest;

const history = (actions: string[], withRequest = true) =>
  JSON.stringify({
    apiVersion: 'history.kubeloop.dev/v1alpha1',
    kind: 'ObjectHistory',
    object: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'web' },
    entries: [
      { startedAt: 't0', triggers: [], actions: [], writes: [], outcome: 'ok', durations: { queueMs: 0, totalMs: 1 } },
      { startedAt: 't1', triggers: [], actions, writes: [], outcome: 'ok', durations: { queueMs: 0, totalMs: 1 }, ...(withRequest ? { request } : { requestOmitted: 'it holds secrets' }) },
    ],
  });

let fn: TestServer;
beforeAll(async () => {
  // Creates one pod named after the ConfigMap.
  fn = await serveForTest(defineFunction({ name: 'one-pod', reconcile: (r) => respond([create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `${r.object.metadata?.name}-pod`, namespace: 'default' } })]) }));
});
afterAll(() => fn?.close());

describe('kubeloop replay --history', () => {
  it('passes when the function asks for the recorded actions again', async () => {
    const loaded = historyCases('web.json', history(['create v1/Pod default/web-pod']));
    if (!('cases' in loaded)) throw new Error(loaded.problem);
    expect(loaded.cases).toHaveLength(1);
    const line = await replayHistoryCase(loaded.cases[0]!, { url: `${fn.url}/` });
    expect(line.detail).toBeUndefined();
    expect(line).toEqual({ status: 'PASS', title: 'web.json  ConfigMap default/web at t1 (ok)' });
  });

  it('fails with the lines that differ when it asks for something else', async () => {
    const loaded = historyCases('web.json', history(['delete v1/Pod default/old']));
    if (!('cases' in loaded)) throw new Error(loaded.problem);
    const line = await replayHistoryCase(loaded.cases[0]!, { url: `${fn.url}/` });
    expect(line).toMatchObject({ status: 'FAIL', detail: '    - delete v1/Pod default/old\n    + create v1/Pod default/web-pod' });
  });

  it('replays the entries of a history file the router wrote (--history-dir), each named by its request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'replay-history-'));
    const writer = new HistoryFileWriter({ dir, maxBytes: 1 << 20, files: 2 }, { router: 'r', logger: pino({ level: 'silent' }) });
    const entry = { startedAt: 't1', triggers: [], actions: ['create v1/Pod default/web-pod'], writes: [], outcome: 'ok', durations: { queueMs: 0, totalMs: 1 } };
    writer.offer('podset', 'default/web', { ...entry, request });
    writer.offer('podset', 'default/db', { ...entry, outcome: 'own-write-seen', actions: [] });
    await writer.close();
    const file = join(dir, HISTORY_FILE);
    const loaded = historyCases(file);
    if (!('cases' in loaded)) throw new Error(loaded.problem);
    expect(loaded.cases.map((c) => c.title)).toEqual([`${file}  ConfigMap default/web at t1 (ok)`]);
    expect(await replayHistoryCase(loaded.cases[0]!, { url: `${fn.url}/` })).toMatchObject({ status: 'PASS' });
  });

  it('says why an entry cannot be replayed: its request withheld, or none kept', () => {
    expect(historyCases('web.json', history([], false))).toEqual({ problem: 'the request was withheld: it holds secrets' });
    expect(historyCases('x.json', '{"kind":"ObjectHistory","entries":[]}')).toMatchObject({ problem: expect.stringContaining('no entry keeps its request') });
    expect(historyCases('x.json', 'nope')).toMatchObject({ problem: expect.stringContaining('not valid JSON') });
  });
});

describe('compareActions', () => {
  it('counts the actions beyond the recorded lines', () => {
    const lines = Array.from({ length: 20 }, (_, i) => `create v1/Pod default/p${i}`);
    expect(compareActions({ actions: lines, omitted: 5 }, [...lines, 'a', 'b', 'c'])).toEqual(['    25 actions recorded, 23 now']);
    expect(compareActions({ actions: lines, omitted: 3 }, [...lines, 'a', 'b', 'c'])).toEqual([]);
  });
});
