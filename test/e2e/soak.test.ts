// The chaos soak, short: three minutes of churn and every kind of fault on a private control plane end
// with zero invariant violations; and Ctrl+C in the middle of a soak leaves no process behind.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAULT_KINDS } from '../soak/fault-plan.ts';
import type { SoakSummary } from '../soak/summary.ts';

interface SoakProcess {
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  kill(signal: NodeJS.Signals): void;
}

function startSoak(args: string[]): SoakProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/soak/main.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return {
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    stdout: () => stdout,
    stderr: () => stderr,
    kill: (signal) => child.kill(signal),
  };
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('soak', () => {
  it('survives three minutes of churn and every kind of fault with no invariant violated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'soak-e2e-'));
    const soak = startSoak(['--minutes', '3', '--seed', '7', '--dir', join(dir, 'logs'), '--json', join(dir, 'summary.json')]);
    const code = await soak.exited;
    const report = `${soak.stdout()}\n${soak.stderr().split('\n').slice(-40).join('\n')}`;
    expect(code, report).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as SoakSummary;
    expect(summary.violations, report).toEqual([]);
    expect(summary.convergenceMs, report).toBeDefined();
    for (const kind of FAULT_KINDS) expect(summary.faults[kind] ?? 0, `${kind} injected\n${report}`).toBeGreaterThan(0);
    // The checks looked at something: pods of every sort, PodSets, due Ats, pods owed a sidecar, reconciles.
    expect(summary.checked['annotated pods'], report).toBeGreaterThan(0);
    expect(summary.checked['At due'], report).toBeGreaterThan(0);
    expect(summary.checked['Watcher pods owed a sidecar'], report).toBeGreaterThan(0);
    expect(summary.churned['PodSet scaled'], report).toBeGreaterThan(0);
    expect(summary.reconcileCalls, report).toBeGreaterThan(0);
    // The leak check read every process's retained memory through its inspector.
    expect(summary.heap.map((s) => s.role), report).toEqual(expect.arrayContaining(['function-podset', 'webhook-a']));
    rmSync(dir, { recursive: true, force: true });
  }, 900_000);

  it('stops every process it started when interrupted mid-run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'soak-e2e-int-'));
    const soak = startSoak(['--minutes', '5', '--seed', '3', '--dir', dir]);
    const deadline = Date.now() + 300_000;
    while (!/churning for/.test(soak.stderr()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
    const pids = Object.values(JSON.parse(/pids (\{.*\})/.exec(soak.stderr())?.[1] ?? '{}') as Record<string, number>);
    expect(pids.length, soak.stderr()).toBeGreaterThanOrEqual(13);
    // Mid-churn, with faults about to start.
    await new Promise((r) => setTimeout(r, 10_000));
    soak.kill('SIGINT');
    expect(await soak.exited).toBe(130);
    expect(pids.filter(alive)).toEqual([]);
    expect(soak.stdout()).toContain('kubeloop soak: seed 3');
    rmSync(dir, { recursive: true, force: true });
  }, 600_000);
});
