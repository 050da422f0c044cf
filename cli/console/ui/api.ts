// The console UI's reads from its own server (same origin: the server refuses any other), and the shapes
// they answer with (types only from the server's modules: nothing of the server is bundled).
import type { Timeline } from '../history-timeline.ts';
import type { Overview, OverviewRow } from '../overview.ts';
import type { TraceSpan, TraceSummary } from '../trace-model.ts';
import type { AdmissionRecord, HookHistory } from '../../../webhooks/index.ts';

export type { AdmissionRecord, HookHistory, Overview, OverviewRow, Timeline, TraceSpan, TraceSummary };

export interface LoopDetail {
  row: OverviewRow;
  objects: Array<{ namespace?: string; name: string }>;
  objectsUnavailable?: { code: number; message: string };
  failures: TraceSummary[];
  failuresUnavailable?: string;
  traces: string | null;
}

export interface HookDetail {
  row: OverviewRow;
  /** The gateway's record of the hook's admissions, or why the caller may not read it. */
  history?: HookHistory;
  historyUnavailable?: { code: number; message: string };
  admissions: TraceSummary[];
  admissionsUnavailable?: string;
  traces: string | null;
}

export type HistoryAnswer = { timeline: Timeline } | { unavailable: { code: number; message: string } };
export interface TraceAnswer {
  traceId: string;
  source: string;
  spans: TraceSpan[];
}

/** GET a JSON answer; a non-2xx answer throws with the server's message. */
export async function getJson<T>(path: string): Promise<T> {
  const reply = await fetch(path, { headers: { accept: 'application/json' } });
  const body = (await reply.json().catch(() => ({}))) as T & { message?: string };
  if (!reply.ok) throw new Error(body.message ?? `HTTP ${reply.status}`);
  return body;
}

export const query = (params: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')).toString();
