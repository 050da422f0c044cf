// Reads the rotated history files offline (`kubeloop history --file`): a directory's files oldest first, or
// one file, and one object's entries from them as an ObjectHistory, the document the history API serves (so
// `-o json` of it is a fixture for `kubeloop replay --history`, as the API's is).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { objectKey } from '../../lib/kube/object-meta.ts';
import { HISTORY_API_VERSION, OBJECT_HISTORY_KIND, type ObjectHistory } from './history-documents.ts';
import { HISTORY_FILE, type HistoryLine } from './history-files.ts';

export interface HistoryFilesRead {
  /** The files read, oldest first. */
  files: string[];
  lines: HistoryLine[];
  /** Lines that are no entry (a line cut short when the disk filled or the router was killed mid-write). */
  unreadable: number;
}

const ROTATED = new RegExp(`^${HISTORY_FILE.replace('.', '\\.')}(?:\\.(\\d+))?$`);

/** The history files of a directory, oldest first (the highest suffix first, the current file last). */
export function historyFilesIn(dir: string): string[] {
  return readdirSync(dir)
    .map((name) => ({ name, match: ROTATED.exec(name) }))
    .filter((f): f is { name: string; match: RegExpExecArray } => f.match !== null)
    .sort((a, b) => Number(b.match[1] ?? 0) - Number(a.match[1] ?? 0))
    .map((f) => join(dir, f.name));
}

/** A history directory (every file in it) or one file; throws the file system's error for a path that is neither. */
export function readHistoryFiles(path: string): HistoryFilesRead {
  const files = statSync(path).isDirectory() ? historyFilesIn(path) : [path];
  const read: HistoryFilesRead = { files, lines: [], unreadable: 0 };
  for (const file of files) {
    for (const text of readFileSync(file, 'utf8').split('\n')) {
      if (text.trim() === '') continue;
      const line = parseLine(text);
      if (line) read.lines.push(line);
      else read.unreadable += 1;
    }
  }
  return read;
}

function parseLine(text: string): HistoryLine | undefined {
  try {
    const value = JSON.parse(text) as Partial<HistoryLine> | null;
    const isEntry = typeof value?.loop === 'string' && typeof value.key === 'string' && typeof value.startedAt === 'string' && Array.isArray(value.triggers) && Array.isArray(value.actions);
    return isEntry ? (value as HistoryLine) : undefined;
  } catch {
    return undefined;
  }
}

/** One object's entries, oldest first, as the history API's document; `servedBy` names the replicas that wrote them. */
export function objectHistoryFromLines(lines: readonly HistoryLine[], loop: string, namespace: string | undefined, name: string): ObjectHistory {
  const key = objectKey({ ...(namespace ? { namespace } : {}), name });
  const mine = lines.filter((line) => line.loop === loop && line.key === key);
  const kind = mine.find((line) => line.object)?.object ?? kindOfRequest(mine);
  const routers = [...new Set(mine.map((line) => line.router))];
  return {
    apiVersion: HISTORY_API_VERSION,
    kind: OBJECT_HISTORY_KIND,
    metadata: { name, ...(namespace ? { namespace } : {}) },
    loop,
    object: { apiVersion: kind?.apiVersion ?? '', kind: kind?.kind ?? '', ...(namespace ? { namespace } : {}), name },
    servedBy: routers.length > 0 ? routers.join(', ') : 'none (the history files)',
    entries: mine.map(({ loop: _loop, key: _key, router: _router, object: _object, ...entry }) => entry),
  };
}

function kindOfRequest(lines: readonly HistoryLine[]): { apiVersion: string; kind: string } | undefined {
  const object = lines.find((line) => line.request)?.request?.object;
  return object?.apiVersion && object.kind ? { apiVersion: object.apiVersion, kind: object.kind } : undefined;
}
