import { describe, expect, it } from 'vitest';
import { parseSoakArgs } from './soak-args.ts';
import { exitCodeOf, formatSummary, violationTime, type SoakSummary } from './summary.ts';

const base: SoakSummary = {
  seed: 7,
  startedAt: '2026-11-23T10:00:00.000Z',
  plannedMinutes: 3,
  churnMs: 180_200,
  totalMs: 240_000,
  churned: { 'PodSet scaled': 30, 'pod created': 12 },
  failedCalls: { 'pod created': 2 },
  faults: { 'etcd-pause': 2, 'watch-cut': 1 },
  faultErrors: [],
  reconcileCalls: 900,
  checked: { pods: 40, PodSets: 3 },
  convergenceMs: 4200,
  convergedAfterChurnMs: 9100,
  violations: [],
  rss: [{ role: 'router-a', pid: 12, startMiB: 180, endMiB: 190.25, spanMs: 180_000, slopeMiBPerMinute: 0.5 }],
  heap: [{ role: 'router-a', pid: 12, startMiB: 24.5, endMiB: 25.25, spanMs: 180_000, slopeMiBPerMinute: 0.05 }],
  logDir: '/tmp/soak',
};

describe('formatSummary', () => {
  it('shows duration, churn, every fault kind, convergence, RSS and PASS', () => {
    const text = formatSummary(base);
    expect(text).toContain('kubeloop soak: seed 7, 3 min planned');
    expect(text).toContain('churn 180.2s');
    expect(text).toContain('42 operations (2 calls failed or skipped during faults)');
    expect(text).toMatch(/PodSet scaled\s+30/);
    expect(text).toMatch(/etcd-pause\s+2/);
    expect(text).toMatch(/cert-rotation\s+0/);
    expect(text).toContain('4.2s after the last fault ended (9.1s after the churn stopped)');
    expect(text).toContain('40 pods, 3 PodSets');
    expect(text).toMatch(/router-a\s+pid 12\s+180\.0 -> 190\.3 MiB\s+\+0\.50 MiB\/min/);
    expect(text.trimEnd().endsWith('PASS')).toBe(true);
    expect(exitCodeOf(base)).toBe(0);
  });

  it('lists violations in time order with offset and wall clock, and FAILs', () => {
    const failed: SoakSummary = {
      ...base,
      violations: [
        { atMs: 90_000, invariant: 'sidecar', detail: 'late' },
        { atMs: 61_500, invariant: 'pod-label', detail: 'early' },
      ],
    };
    const text = formatSummary(failed);
    expect(text.indexOf('early')).toBeLessThan(text.indexOf('late'));
    expect(text).toContain('+61.5s (10:01:01Z)  pod-label: early');
    expect(text.trimEnd().endsWith('FAIL')).toBe(true);
    expect(exitCodeOf(failed)).toBe(1);
  });

  it('fails a run that never converged even without a recorded violation', () => {
    const { convergenceMs: _c, convergedAfterChurnMs: _a, ...rest } = base;
    expect(formatSummary(rest)).toContain('NOT converged');
    expect(exitCodeOf(rest)).toBe(1);
  });

  it('formats a violation time', () => {
    expect(violationTime(base, 3_723_000)).toBe('+3723.0s (11:02:03Z)');
  });
});

describe('parseSoakArgs', () => {
  it('reads minutes, seed, dir and json', () => {
    expect(parseSoakArgs(['--minutes', '3', '--seed', '42', '--dir', '/tmp/x', '--json', 'out.json'])).toEqual({ minutes: 3, seed: 42, dir: '/tmp/x', json: 'out.json', namespacedLoops: [] });
    expect(parseSoakArgs([])).toEqual({ minutes: 10, seed: 1, namespacedLoops: [] });
    expect(parseSoakArgs(['--namespaced-loops', 'pod-name-label, podset']).namespacedLoops).toEqual(['pod-name-label', 'podset']);
    expect(() => parseSoakArgs(['--namespaced-loops', 'podset,nope'])).toThrow('--namespaced-loops: "nope" is not a sample Loop');
  });

  it('names the bad flag', () => {
    expect(() => parseSoakArgs(['--minutes', '0'])).toThrow(/--minutes: want a number from 0.5 to 1440, got "0"/);
    expect(() => parseSoakArgs(['--seed', '1.5'])).toThrow(/--seed: want a non-negative integer/);
    expect(() => parseSoakArgs(['extra'])).toThrow(/unexpected argument "extra"/);
  });
});
