// Runs the conformance cases and then the recorded fixtures of a folder against one function URL,
// reporting each result as it finishes (so a slow function shows progress), and renders the final table.
import { loadFixtures, replayFixture, formatDifferences, type Fixture } from '../../lib/replay/index.ts';
import { CaseFailure } from './http-call.ts';
import { BATCH_CASES } from './batch-cases.ts';
import { CONFORMANCE_CASES, type ConformanceCase, type ConformanceContext } from './cases.ts';

export type Outcome = 'PASS' | 'FAIL' | 'SKIP';

export interface CaseResult {
  group: string;
  name: string;
  outcome: Outcome;
  /** A note on a pass, the reason of a failure or skip. */
  detail: string;
}

async function runCase(one: ConformanceCase, context: ConformanceContext): Promise<CaseResult> {
  const skipped = one.skip?.(context);
  if (skipped !== undefined) return { group: one.group, name: one.name, outcome: 'SKIP', detail: skipped };
  try {
    return { group: one.group, name: one.name, outcome: 'PASS', detail: await one.run(context) };
  } catch (error) {
    if (!(error instanceof CaseFailure)) throw error;
    return { group: one.group, name: one.name, outcome: 'FAIL', detail: error.message };
  }
}

/** The valid fixtures of a folder (or one file), or the files that are not, as failures. */
export function readFixtureFolder(path: string): { fixtures: Array<{ name: string; fixture: Fixture }>; invalid: CaseResult[] } {
  const fixtures: Array<{ name: string; fixture: Fixture }> = [];
  const invalid: CaseResult[] = [];
  for (const loaded of loadFixtures(path)) {
    if (loaded.ok) fixtures.push({ name: loaded.name, fixture: loaded.fixture });
    else invalid.push({ group: 'fixture', name: loaded.name, outcome: 'FAIL', detail: `invalid fixture: ${loaded.error}` });
  }
  return { fixtures, invalid };
}

export async function runConformance(
  context: ConformanceContext,
  fixtures: Array<{ name: string; fixture: Fixture }>,
  onResult: (result: CaseResult) => void,
): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const record = (result: CaseResult) => {
    results.push(result);
    onResult(result);
  };
  for (const one of [...CONFORMANCE_CASES, ...BATCH_CASES]) record(await runCase(one, context));
  for (const { name, fixture } of fixtures) {
    const replayed = await replayFixture(fixture, { url: context.url, timeoutMs: context.timeoutMs, ...(context.signingKeys ? { signingKeys: context.signingKeys } : {}) });
    const detail = replayed.outcome === 'pass' ? fixture.description : replayed.outcome === 'error' ? replayed.message : formatDifferences(replayed.differences).trim();
    record({ group: 'fixture', name, outcome: replayed.outcome === 'pass' ? 'PASS' : 'FAIL', detail });
  }
  return results;
}

/** One line per result as it finishes: the outcome, group and case, and the reason under a failure. */
export function formatResultLine(result: CaseResult): string {
  const line = `${result.outcome} ${result.group.padEnd(11)} ${result.name}`;
  return result.outcome === 'PASS' ? line : `${line}\n    ${result.detail.replace(/\n/g, '\n    ')}`;
}

const firstLine = (text: string, max: number): string => {
  const line = text.split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** The closing table: group, case, result and a short note, then the counts. */
export function formatTable(results: readonly CaseResult[]): string {
  const rows = results.map((r) => [r.group, r.name, r.outcome, firstLine(r.detail, 70)] as const);
  const headers = ['GROUP', 'CASE', 'RESULT', 'DETAIL'] as const;
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const render = (cells: readonly string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  const count = (outcome: Outcome) => results.filter((r) => r.outcome === outcome).length;
  return [render(headers), ...rows.map(render), '', `${count('PASS')} passed, ${count('FAIL')} failed, ${count('SKIP')} skipped`].join('\n');
}
