// One line per case as soon as it finishes, then a summary: how `kubeloop replay` (and any command that runs
// a list of checks, such as a conformance run) reports, so a long run shows progress and a failure is seen
// before the rest is done. Passed and failed are always counted; other statuses when they occur.
export type CaseStatus = 'PASS' | 'FAIL' | 'UPDATED' | 'RECORDED' | 'SKIP';

export interface CaseLine {
  status: CaseStatus;
  /** What the case is, e.g. "<file>  <description>". */
  title: string;
  /** Printed under the title, already indented (a diff, an error message). */
  detail?: string;
}

const SUMMARY_WORDS: Record<CaseStatus, string> = { PASS: 'passed', FAIL: 'failed', UPDATED: 'updated', RECORDED: 'recorded', SKIP: 'skipped' };

export class CaseProgress {
  private readonly counts = new Map<CaseStatus, number>();

  constructor(private readonly print: (line: string) => void = (line) => console.log(line)) {}

  report(line: CaseLine): void {
    this.counts.set(line.status, (this.counts.get(line.status) ?? 0) + 1);
    this.print(`${line.status} ${line.title}${line.detail ? `\n${line.detail}` : ''}`);
  }

  /** "3 passed, 1 failed, 2 updated". */
  summary(): string {
    const count = (status: CaseStatus): number => this.counts.get(status) ?? 0;
    const extra = (['UPDATED', 'RECORDED', 'SKIP'] as const).filter((status) => count(status) > 0).map((status) => `, ${count(status)} ${SUMMARY_WORDS[status]}`);
    return `${count('PASS')} passed, ${count('FAIL')} failed${extra.join('')}`;
  }

  /** Prints the summary after a blank line; exit code 0 when nothing failed, else 1. */
  finish(): number {
    this.print(`\n${this.summary()}`);
    return (this.counts.get('FAIL') ?? 0) === 0 ? 0 : 1;
  }
}
