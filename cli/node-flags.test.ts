// The images' node flags do on this Node what docs/performance.md measured them for. The functions': hot code is
// optimized by Maglev and never by TurboFan (--max-opt=2), on the main thread (--single-threaded), with no baseline
// code on the way there (--no-sparkplug). The router's: V8's efficiency mode, in which hot code stays with Maglev,
// and no allocation-site pretenuring, so a quiet watch's bookmarks stay out of the old generation.
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { serveBookmarks } from '../test/support/bookmark-server.ts';
import { dockerfileTargets } from '../test/support/production-bundle.ts';
import { selfSignedCertificate } from '../test/support/test-certificate.ts';
import { FUNCTION_NODE_FLAGS, ROUTER_NODE_FLAGS } from './node-flags.ts';

const QUIET_INFORMERS = fileURLToPath(new URL('../test/support/quiet-informers-child.ts', import.meta.url));

// V8's %GetOptimizationStatus bits (runtime-test.cc): 1 << 5 Maglev code, 1 << 6 TurboFan code.
const HOT_FUNCTION_TIERS = `
  function hot(o) { return o.a + o.b * 2; }
  let sum = 0;
  for (let i = 0; i < 2e6; i++) sum += hot({ a: i, b: 1 });
  const status = %GetOptimizationStatus(hot);
  console.log(JSON.stringify({ maglev: (status & 32) !== 0, turbofan: (status & 64) !== 0 }));
`;

function tiersUnder(flags: readonly string[]): { maglev: boolean; turbofan: boolean } {
  const out = execFileSync(process.execPath, [...flags, '--allow-natives-syntax', '-e', HOT_FUNCTION_TIERS], { encoding: 'utf8', env: { PATH: process.env.PATH } });
  return JSON.parse(out) as { maglev: boolean; turbofan: boolean };
}

function efficiencyModeUnder(flags: readonly string[]): boolean {
  const out = execFileSync(process.execPath, [...flags, '--allow-natives-syntax', '-e', 'console.log(%IsEfficiencyModeEnabled())'], { encoding: 'utf8', env: { PATH: process.env.PATH } });
  return out.trim() === 'true';
}

/** What V8 reports compiling with Sparkplug, its baseline tier, while a function warms up. */
function baselineBatchesUnder(flags: readonly string[]): number {
  const warm = 'function warm(o) { return o.a + o.b * 2; } let sum = 0; for (let i = 0; i < 2000; i++) sum += warm({ a: i, b: 1 });';
  const out = execFileSync(process.execPath, [...flags, '--trace-baseline-batch-compilation', '-e', warm], { encoding: 'utf8', env: { PATH: process.env.PATH } });
  return out.split('\n').filter((line) => line.includes('Compiling current batch')).length;
}

describe('the function node flags (cli/node-flags.ts)', () => {
  it('leave a hot function optimized by Maglev, never by TurboFan', () => {
    expect(tiersUnder(FUNCTION_NODE_FLAGS)).toEqual({ maglev: true, turbofan: false });
  });

  it('are what keeps TurboFan out: on the main thread alone, the same function reaches TurboFan', () => {
    expect(tiersUnder(['--single-threaded'])).toEqual({ maglev: false, turbofan: true });
  });

  it('compile no baseline (Sparkplug) code, which the same flags without --no-sparkplug do', () => {
    expect(baselineBatchesUnder(FUNCTION_NODE_FLAGS)).toBe(0);
    expect(baselineBatchesUnder(FUNCTION_NODE_FLAGS.filter((flag) => flag !== '--no-sparkplug'))).toBeGreaterThan(0);
  });
});

describe('the router node flags (cli/node-flags.ts)', () => {
  it('put V8 in efficiency mode, which a plain node is not in', () => {
    expect(efficiencyModeUnder(ROUTER_NODE_FLAGS)).toBe(true);
    expect(efficiencyModeUnder([])).toBe(false);
  });

  it('leave a hot function with Maglev where a plain node optimizes it with TurboFan', () => {
    // Compiled on the main thread, so the status is read after the compile it asked for, never while a helper
    // thread (starved on a busy machine) is still at it: the function flags' --single-threaded does the same.
    const synchronous = ['--no-concurrent-recompilation'];
    expect(tiersUnder([...ROUTER_NODE_FLAGS, ...synchronous])).toEqual({ maglev: true, turbofan: false });
    expect(tiersUnder(synchronous)).toEqual({ maglev: false, turbofan: true });
  });

  it("leave a quiet watch's bookmarks out of the old generation once the watches opened together, as a router's do", async () => {
    // 200 informers open their watches at once and hear 200 bookmarks a second, under the image's flags and NODE_OPTIONS.
    // With V8's pretenuring, what the opening taught it put ~340 bytes of each bookmark there; without, ~30.
    const { key, cert } = selfSignedCertificate('127.0.0.1');
    const server = await serveBookmarks({ cert, key, watches: 200, rate: 200 });
    try {
      const router = (await dockerfileTargets()).find((target) => target.target === 'router');
      const args = [...ROUTER_NODE_FLAGS, '--import', 'tsx', QUIET_INFORMERS, `https://127.0.0.1:${server.port}`, '200', '3000', '4000'];
      const { stdout } = await promisify(execFile)(process.execPath, args, { env: { ...process.env, ...router?.env, QUIET_INFORMERS_CA: cert } });
      const reading = JSON.parse(stdout) as { bookmarks: number; oldGenerationBytesPerBookmark: number };
      expect(reading.bookmarks).toBeGreaterThan(200);
      expect(reading.oldGenerationBytesPerBookmark).toBeLessThan(100);
    } finally {
      await server.close();
    }
  }, 60_000);
});
