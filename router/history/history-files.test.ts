import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ReconcileRecord } from '../reconcile/flight-recorder.ts';
import { FlightRecorder } from '../reconcile/flight-recorder.ts';
import { objectHistoryFromLines, readHistoryFiles } from './history-file-reader.ts';
import { HISTORY_FILE, historyFileNames, HistoryFileWriter, MAX_PENDING_LINES, type DropReason } from './history-files.ts';

const entry = (outcome: string, extra: Partial<ReconcileRecord> = {}): ReconcileRecord => ({ startedAt: '2026-01-01T00:00:00.000Z', triggers: [], actions: [`patch v1/ConfigMap ns/${outcome}`], writes: [], outcome, durations: { queueMs: 0, totalMs: 1 }, ...extra });
const request = (name: string, padding = '') => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'l', trigger: { type: 'MODIFIED' }, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', name }, data: { padding } }, children: {}, now: '' }) as unknown as ReconcileRecord['request'];

function counted() {
  const counts = { written: 0, dropped: {} as Partial<Record<DropReason, number>> };
  return { counts, metrics: { written: (n: number) => void (counts.written += n), dropped: (reason: DropReason, n: number) => void (counts.dropped[reason] = (counts.dropped[reason] ?? 0) + n) } };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'history-files-'));
});
afterEach(() => {
  chmodSync(dir, 0o700);
  rmSync(dir, { recursive: true, force: true });
});

const logger = pino({ level: 'silent' });

describe('HistoryFileWriter', () => {
  it('appends each finished entry as one JSON line naming the Loop, the key, the kind and the router', async () => {
    const writer = new HistoryFileWriter({ dir, maxBytes: 1 << 20, files: 3 }, { router: 'router-a', logger, kindOf: (loop) => (loop === 'echo' ? { apiVersion: 'v1', kind: 'ConfigMap' } : undefined) });
    const recorder = new FlightRecorder({ perObject: 2, objects: 10 }, writer);
    for (const outcome of ['a', 'b', 'c']) recorder.record('echo', 'ns/web', entry(outcome, { request: request('web') }));
    await writer.close();
    const lines = readFileSync(join(dir, HISTORY_FILE), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    // The file keeps what memory drops: all three, each with the request it was sent.
    expect(lines.map((l) => l.outcome)).toEqual(['a', 'b', 'c']);
    expect(lines[0]).toMatchObject({ loop: 'echo', key: 'ns/web', router: 'router-a', object: { apiVersion: 'v1', kind: 'ConfigMap' }, request: { object: { metadata: { name: 'web' } } } });
    expect(recorder.history('echo', 'ns/web').map((e) => e.outcome)).toEqual(['b', 'c']);
    expect(statSync(join(dir, HISTORY_FILE)).mode & 0o777).toBe(0o600);
  });

  it('rotates by size and keeps N files, so the disk used stays bounded', async () => {
    const { counts, metrics } = counted();
    const writer = new HistoryFileWriter({ dir, maxBytes: 1000, files: 3 }, { router: 'r', logger, metrics });
    for (let i = 0; i < 60; i++) {
      writer.offer('echo', `ns/o${i}`, entry(`o${i}`));
      if (i % 7 === 0) await writer.flush();
    }
    await writer.close();
    expect(readdirSync(dir).sort()).toEqual(historyFileNames(3).sort());
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).size).toBeLessThanOrEqual(1000);
    const { lines, unreadable } = readHistoryFiles(dir);
    expect(unreadable).toBe(0);
    // The newest entries survive, oldest first and without a gap; the oldest are rotated away.
    const kept = lines.map((l) => Number(l.outcome.slice(1)));
    expect(kept.at(-1)).toBe(59);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => 60 - kept.length + i));
    expect(kept.length).toBeLessThan(60);
    expect(counts.written).toBe(60);
  });

  it('goes on appending to the file a restarted router left', async () => {
    const first = new HistoryFileWriter({ dir, maxBytes: 1 << 20, files: 2 }, { router: 'r1', logger });
    first.offer('echo', 'ns/web', entry('before'));
    await first.close();
    const second = new HistoryFileWriter({ dir, maxBytes: 1 << 20, files: 2 }, { router: 'r2', logger });
    second.offer('echo', 'ns/web', entry('after'));
    await second.close();
    const history = objectHistoryFromLines(readHistoryFiles(dir).lines, 'echo', 'ns', 'web');
    expect(history.entries.map((e) => e.outcome)).toEqual(['before', 'after']);
    expect(history.servedBy).toBe('r1, r2');
  });

  it('writes an entry whose request would not fit in a file without it, and drops one that cannot fit at all', async () => {
    const { counts, metrics } = counted();
    const writer = new HistoryFileWriter({ dir, maxBytes: 600, files: 2 }, { router: 'r', logger, metrics });
    writer.offer('echo', 'ns/big', entry('big', { request: request('big', 'x'.repeat(2000)) }));
    writer.offer('echo', 'ns/huge', entry('huge', { actions: ['y'.repeat(2000)] }));
    await writer.close();
    const [line] = readHistoryFiles(dir).lines;
    expect(line).toMatchObject({ outcome: 'big', requestOmitted: expect.stringContaining('600 bytes') });
    expect(line).not.toHaveProperty('request');
    expect(counts).toEqual({ written: 1, dropped: { 'too-large': 1 } });
  });

  it('drops and counts entries it cannot write, without throwing, and writes again once it can', async () => {
    const { counts, metrics } = counted();
    const errors: unknown[] = [];
    const recording = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line)) });
    const blocked = join(dir, 'not-a-dir');
    writeFileSync(blocked, 'a file where the directory should be');
    const writer = new HistoryFileWriter({ dir: blocked, maxBytes: 1 << 20, files: 2 }, { router: 'r', logger: recording, metrics });
    const recorder = new FlightRecorder({ perObject: 5, objects: 10 }, writer);
    expect(() => recorder.record('echo', 'ns/web', entry('a'))).not.toThrow();
    await writer.flush();
    recorder.record('echo', 'ns/web', entry('b'));
    await writer.flush();
    // The reconcile's memory entry is kept; the file's loss is counted and logged once, not per entry.
    expect(recorder.history('echo', 'ns/web')).toHaveLength(2);
    expect(counts.dropped).toEqual({ error: 2 });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ msg: expect.stringContaining('history file write failed'), dir: blocked });

    rmSync(blocked);
    recorder.record('echo', 'ns/web', entry('c'));
    await writer.close();
    expect(readHistoryFiles(blocked).lines.map((l) => l.outcome)).toEqual(['c']);
    expect(counts.written).toBe(1);
  });

  it('drops an entry that cannot be serialised and goes on with the next', async () => {
    const { counts, metrics } = counted();
    const writer = new HistoryFileWriter({ dir, maxBytes: 1 << 20, files: 2 }, { router: 'r', logger, metrics });
    writer.offer('echo', 'ns/odd', entry('odd', { request: { odd: 1n } as unknown as ReconcileRecord['request'] }));
    writer.offer('echo', 'ns/web', entry('fine'));
    await writer.close();
    expect(readHistoryFiles(dir).lines.map((l) => l.outcome)).toEqual(['fine']);
    expect(counts).toEqual({ written: 1, dropped: { error: 1 } });
  });

  it('holds at most a bounded number of entries waiting for the disk, dropping and counting the rest', async () => {
    const { counts, metrics } = counted();
    const writer = new HistoryFileWriter({ dir, maxBytes: 1 << 24, files: 2 }, { router: 'r', logger, metrics });
    // Offered in one turn: nothing is written before the writer's next turn.
    for (let i = 0; i < MAX_PENDING_LINES + 5; i++) writer.offer('echo', `ns/o${i}`, entry(`o${i}`));
    await writer.close();
    expect(counts).toEqual({ written: MAX_PENDING_LINES, dropped: { behind: 5 } });
  });
});

describe('readHistoryFiles', () => {
  it('reads a directory oldest file first, skips lines that are no entry and counts them', () => {
    const line = (outcome: string, key = 'ns/web') => JSON.stringify({ ...entry(outcome), loop: 'echo', key, router: 'r' });
    writeFileSync(join(dir, `${HISTORY_FILE}.2`), `${line('1')}\n`);
    writeFileSync(join(dir, `${HISTORY_FILE}.10`), `${line('0')}\n`);
    writeFileSync(join(dir, `${HISTORY_FILE}.1`), `${line('2')}\n{"cut short\n`);
    writeFileSync(join(dir, HISTORY_FILE), `${line('3')}\n${line('other', 'ns/db')}\n[1,2]\n`);
    writeFileSync(join(dir, 'unrelated.txt'), 'not read');
    const read = readHistoryFiles(dir);
    expect(read.files.map((f) => f.slice(dir.length + 1))).toEqual([`${HISTORY_FILE}.10`, `${HISTORY_FILE}.2`, `${HISTORY_FILE}.1`, HISTORY_FILE]);
    expect(read.unreadable).toBe(2);
    const history = objectHistoryFromLines(read.lines, 'echo', 'ns', 'web');
    expect(history.entries.map((e) => e.outcome)).toEqual(['0', '1', '2', '3']);
    expect(history.entries[0]).not.toHaveProperty('loop');
    expect(readHistoryFiles(join(dir, `${HISTORY_FILE}.1`)).lines.map((l) => l.outcome)).toEqual(['2']);
  });

  it('takes the kind from a request when the lines do not name it, and names the object without one', () => {
    const lines = [{ ...entry('a', { request: request('web') }), loop: 'echo', key: 'ns/web', router: 'r' }];
    expect(objectHistoryFromLines(lines, 'echo', 'ns', 'web').object).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'web' });
    expect(objectHistoryFromLines(lines, 'echo', 'ns', 'other')).toMatchObject({ entries: [], object: { name: 'other' } });
  });
});
