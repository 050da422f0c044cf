// CaseProgress: a line per case as it is reported, a summary that counts each status, the exit code.
import { describe, expect, it } from 'vitest';
import { CaseProgress } from './case-progress.ts';

describe('CaseProgress', () => {
  it('prints each case when reported, then the counts and exit code 1 when one failed', () => {
    const printed: string[] = [];
    const progress = new CaseProgress((line) => printed.push(line));
    progress.report({ status: 'PASS', title: 'a.json  first' });
    expect(printed).toEqual(['PASS a.json  first']);
    progress.report({ status: 'FAIL', title: 'b.json  second', detail: '    HTTP 500' });
    progress.report({ status: 'RECORDED', title: 'c.json  third' });
    expect(progress.finish()).toBe(1);
    expect(printed).toEqual(['PASS a.json  first', 'FAIL b.json  second\n    HTTP 500', 'RECORDED c.json  third', '\n1 passed, 1 failed, 1 recorded']);
  });

  it('exits 0 when nothing failed', () => {
    const progress = new CaseProgress(() => undefined);
    progress.report({ status: 'UPDATED', title: 'a.json' });
    expect(progress.summary()).toBe('0 passed, 0 failed, 1 updated');
    expect(progress.finish()).toBe(0);
  });
});
