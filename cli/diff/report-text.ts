// The text report of `kubeloop diff`: per changed object the differing actions, then each target as the
// new version's writes would leave it against the live object (server dry-run); errors on one line each.
import { formatDifferences } from '../../lib/replay/compare-responses.ts';
import type { AdmissionReport } from './hook-diff.ts';
import type { ObjectReport } from './loop-diff.ts';
import { formatChange } from './object-diff.ts';

export function formatLoopReports(reports: readonly ObjectReport[]): string {
  const lines: string[] = [];
  for (const report of reports) {
    if (report.outcome === 'error') {
      lines.push(`ERROR    ${report.object}: ${report.error ?? ''}`);
      continue;
    }
    lines.push(`CHANGED  ${report.object}`);
    if (report.diff?.response.length) lines.push(formatDifferences(report.diff.response.map((d) => ({ ...d, path: `response ${d.path}` }))));
    for (const target of report.diff?.targets ?? []) lines.push(formatDifferences(target.differences));
    for (const after of report.after ?? []) {
      if (after.result === 'none') continue;
      if (after.result === 'refused') lines.push(`    ${after.target}: the new version's write would be refused: ${after.message ?? ''}`);
      else if (after.result === 'deleted') lines.push(`    ${after.target}: would be deleted`);
      else {
        lines.push(`    ${after.target} ${after.result === 'created' ? 'would be created' : 'after the new version (server dry-run) against live'}:`);
        for (const change of after.changes ?? []) lines.push(`      ${formatChange(change)}`);
      }
    }
  }
  return lines.length > 0 ? `${lines.join('\n')}\n\n` : '';
}

export function formatHookReports(reports: readonly AdmissionReport[]): string {
  const lines: string[] = [];
  for (const report of reports) {
    if (report.outcome === 'error') {
      lines.push(`ERROR    ${report.request}: ${report.error ?? ''}`);
      continue;
    }
    lines.push(`CHANGED  ${report.request}  (${report.file})`, `    was: ${report.baseline ?? ''}`, `    now: ${report.candidate ?? ''}`);
    lines.push(formatDifferences(report.differences ?? [], '      '));
  }
  return lines.length > 0 ? `${lines.join('\n')}\n\n` : '';
}
