// The flight recorder's longer past on disk (--history-dir): each finished entry appended as one JSON line to
// <dir>/history.jsonl, rotated by size to history.jsonl.1 ... .<files-1>, so the disk used stays under
// files x max bytes. Written off the reconcile path: a bounded buffer, dropped and counted when behind or failing.
import { mkdir, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { KindRef } from '../../api/meta.ts';
import type { Logger } from '../../lib/observability/logger.ts';
import type { HistorySink, ReconcileRecord } from '../reconcile/flight-recorder.ts';

/** The current file; older ones carry a suffix, .1 the most recent of them. */
export const HISTORY_FILE = 'history.jsonl';

/** One line of a history file: the entry with what names it (the recorder's memory keys it by both). */
export interface HistoryLine extends ReconcileRecord {
  loop: string;
  /** `<namespace>/<name>` or `<name>`: the primary's key. */
  key: string;
  /** The primary's kind (the Loop's `for`), so a line read on its own says what it is about. */
  object?: KindRef;
  /** The replica that reconciled it. */
  router: string;
  /** Why the request is not on the line (it would not fit in one file). */
  requestOmitted?: string;
}

export interface HistoryFileSettings {
  dir: string;
  /** A file is rotated before a line would take it over this. */
  maxBytes: number;
  /** Files kept, the current one included. */
  files: number;
}

export const DEFAULT_HISTORY_FILE_MAX_BYTES = 10 * 1024 * 1024;
export const DEFAULT_HISTORY_FILES = 5;
/** Entries waiting for the disk at most; beyond, entries are dropped (counted) rather than held in memory. */
export const MAX_PENDING_LINES = 1000;

export type DropReason = 'behind' | 'error' | 'too-large';

export interface HistoryFileMetrics {
  written(lines: number): void;
  dropped(reason: DropReason, lines: number): void;
}

/** The file names of a history directory, oldest first: history.jsonl.<files-1>, ..., history.jsonl.1, history.jsonl. */
export function historyFileNames(files: number): string[] {
  return Array.from({ length: files }, (_, i) => (files - 1 - i === 0 ? HISTORY_FILE : `${HISTORY_FILE}.${files - 1 - i}`));
}

/** The line for an entry; without its request when it would not fit in one file, undefined when nothing fits. */
export function historyLine(line: HistoryLine, maxBytes: number): string | undefined {
  const full = `${JSON.stringify(line)}\n`;
  if (Buffer.byteLength(full) <= maxBytes) return full;
  if (!line.request) return undefined;
  const { request: _request, ...rest } = line;
  const short = `${JSON.stringify({ ...rest, requestOmitted: `the request made the line larger than the history file size (${maxBytes} bytes)` })}\n`;
  return Buffer.byteLength(short) <= maxBytes ? short : undefined;
}

export interface HistoryFileOptions {
  /** The replica's identity, on every line. */
  router: string;
  logger: Logger;
  metrics?: HistoryFileMetrics;
  /** The Loop's primary kind, when it runs here. */
  kindOf?: (loop: string) => KindRef | undefined;
}

export class HistoryFileWriter implements HistorySink {
  readonly #settings: HistoryFileSettings;
  readonly #router: string;
  readonly #logger: Logger;
  readonly #metrics: HistoryFileMetrics | undefined;
  readonly #kindOf: HistoryFileOptions['kindOf'];
  #pending: HistoryLine[] = [];
  #draining: Promise<void> | undefined;
  #file: FileHandle | undefined;
  #size = 0;
  /** Lines dropped since writing last failed; set while failing, so a full disk is logged once, not per entry. */
  #failedLines: number | undefined;

  constructor(settings: HistoryFileSettings, options: HistoryFileOptions) {
    this.#settings = settings;
    this.#router = options.router;
    this.#logger = options.logger;
    this.#metrics = options.metrics;
    this.#kindOf = options.kindOf;
  }

  /** Takes one finished entry; never waits and never throws (the reconcile that finished it goes on). */
  offer(loop: string, key: string, entry: ReconcileRecord): void {
    if (this.#pending.length >= MAX_PENDING_LINES) {
      this.#metrics?.dropped('behind', 1);
      if (this.#failedLines !== undefined) this.#failedLines += 1;
      return;
    }
    // A shallow copy: the recorder later deletes the request from the entry it keeps (only the latest keeps one).
    const kind = this.#kindOf?.(loop);
    this.#pending.push({ ...entry, loop, key, ...(kind ? { object: { apiVersion: kind.apiVersion, kind: kind.kind } } : {}), router: this.#router });
    this.#draining ??= this.#drain();
  }

  /** Resolves when every entry offered so far is written (or dropped). */
  async flush(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  async close(): Promise<void> {
    await this.flush();
    await this.#file?.close().catch(() => undefined);
    this.#file = undefined;
  }

  async #drain(): Promise<void> {
    // One turn later: the entries a burst of reconciles finishes go out in one write.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending;
        this.#pending = [];
        await this.#write(batch);
      }
    } finally {
      this.#draining = undefined;
    }
  }

  async #write(batch: HistoryLine[]): Promise<void> {
    const lines: string[] = [];
    for (const entry of batch) {
      let line: string | undefined;
      try {
        line = historyLine(entry, this.#settings.maxBytes);
      } catch (error) {
        // Not JSON (nothing the API server sent can be, but a rejection here would end the process).
        this.#logger.error({ err: error, loop: entry.loop, key: entry.key }, 'history entry not written: it cannot be serialised');
        this.#metrics?.dropped('error', 1);
        continue;
      }
      if (line === undefined) this.#metrics?.dropped('too-large', 1);
      else lines.push(line);
    }
    let written = 0;
    try {
      let chunk: string[] = [];
      let chunkBytes = 0;
      const writeChunk = async () => {
        if (chunk.length === 0) return;
        await (await this.#open()).write(chunk.join(''));
        this.#size += chunkBytes;
        written += chunk.length;
        chunk = [];
        chunkBytes = 0;
      };
      for (const line of lines) {
        const bytes = Buffer.byteLength(line);
        await this.#open();
        if (this.#size + chunkBytes + bytes > this.#settings.maxBytes && this.#size + chunkBytes > 0) {
          await writeChunk();
          await this.#rotate();
        }
        chunk.push(line);
        chunkBytes += bytes;
      }
      await writeChunk();
      this.#metrics?.written(written);
      if (this.#failedLines !== undefined) {
        this.#logger.info({ dir: this.#settings.dir, dropped: this.#failedLines }, 'history file writes recovered');
        this.#failedLines = undefined;
      }
    } catch (error) {
      const lost = lines.length - written;
      this.#metrics?.written(written);
      this.#metrics?.dropped('error', lost);
      if (this.#failedLines === undefined) this.#logger.error({ err: error, dir: this.#settings.dir, dropped: lost }, 'history file write failed: entries are dropped (counted in kubeloop_router_history_file_dropped_total) until a write succeeds');
      this.#failedLines = (this.#failedLines ?? 0) + lost;
      // Opened again on the next entry: a disk that has room again, a directory made writable, are picked up.
      await this.#file?.close().catch(() => undefined);
      this.#file = undefined;
    }
  }

  async #open(): Promise<FileHandle> {
    if (this.#file) return this.#file;
    await mkdir(this.#settings.dir, { recursive: true, mode: 0o700 });
    // Owner-only: a request holds the objects the Loop sees (a Secret's data, for a Loop watching Secrets).
    const file = await open(join(this.#settings.dir, HISTORY_FILE), 'a', 0o600);
    this.#size = (await file.stat()).size;
    this.#file = file;
    return file;
  }

  /** history.jsonl -> .1 -> .2 ...; the oldest is replaced by the one before it. */
  async #rotate(): Promise<void> {
    await this.#file?.close();
    this.#file = undefined;
    this.#size = 0;
    const names = historyFileNames(this.#settings.files).map((name) => join(this.#settings.dir, name));
    if (names.length === 1) await unlink(names[0]!).catch(ignoreMissing);
    for (let i = 0; i < names.length - 1; i++) await rename(names[i + 1]!, names[i]!).catch(ignoreMissing);
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}
