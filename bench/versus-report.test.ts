// bench:router section (0): ratios against Go come from the same mode and work item, router and function apart.
import { describe, expect, it } from 'vitest';
import { PERF_HZ } from './native-split.ts';
import { compareFloor, compareSides, formatFunctionCalls, formatNative, formatStartCpu, formatVersus, limitModes, MiB, workItems, type LimitMode, type VersusRun } from './versus-report.ts';

const capped: LimitMode = { name: 'capped', qps: 100, burst: 200 };
const uncapped: LimitMode = { name: 'uncapped', qps: 1000, burst: 2000 };

function run(over: Partial<VersusRun>): VersusRun {
  return { mode: capped, side: 'kubeloop', work: 'existing', pods: 500, totalMs: 1000, firstLabelMs: 100, p50: 10, p99: 20, cpuMs: 1000, functionCpuMs: 0, peakRss: 100 * MiB, idleRss: 0, conflicts: 0, calls: 500, requests: 500, ...over };
}

describe('compareSides', () => {
  it('divides per pod and against Go of the same mode and work item', () => {
    const [c, ...rest] = compareSides([
      run({ totalMs: 4000, cpuMs: 1500, functionCpuMs: 500, requests: 125, peakRss: 200 * MiB, firstLabelMs: 600 }),
      run({ side: 'go', totalMs: 2000, cpuMs: 500, peakRss: 50 * MiB, firstLabelMs: 300 }),
      // Another mode's Go run must not enter the capped ratios.
      run({ mode: uncapped, side: 'go', totalMs: 1, cpuMs: 1 }),
    ]);
    expect(rest).toEqual([]);
    expect(c!.mode).toBe(capped);
    expect(c!.podsPerSecond).toEqual({ kubeloop: 125, go: 250 });
    expect(c!.throughput).toBe(0.5);
    expect(c!.cpuPerPod).toEqual({ router: 3, function: 1, go: 1 });
    expect(c!.cpu).toBe(4);
    expect(c!.routerCpu).toBe(3);
    expect(c!.rss).toBe(4);
    expect(c!.requestsPerPod).toBe(0.25);
    expect(c!.firstLabelMs).toEqual({ kubeloop: 600, go: 300 });
  });

  it('averages rounds and leaves unbatched runs out of the comparison', () => {
    const [c] = compareSides([
      run({ totalMs: 1000 }),
      run({ totalMs: 3000 }),
      run({ side: 'unbatched', totalMs: 100_000 }),
      run({ side: 'go', totalMs: 2000 }),
    ]);
    expect(c!.throughput).toBe(1);
  });

  it('compares nothing where one side is missing', () => {
    expect(compareSides([run({ side: 'go' })])).toEqual([]);
  });
});

describe('formatVersus', () => {
  it('prints one table per mode with its limit, the ratios, and batching against unbatched', () => {
    const text = formatVersus(
      [
        run({ cpuMs: 1500, functionCpuMs: 500 }),
        run({ side: 'unbatched', cpuMs: 2000, functionCpuMs: 1000 }),
        run({ side: 'go', cpuMs: 500 }),
        run({ mode: uncapped, work: 'live', pods: 2000, idleRss: 70 * MiB, functionPeakRss: 90 * MiB }),
        run({ mode: uncapped, work: 'existing', pods: 2000, functionPeakRss: 80 * MiB }),
        run({ mode: uncapped, side: 'go', work: 'live', pods: 2000 }),
      ],
      16,
    ).join('\n');
    expect(text).toContain('(0) capped: kubeloop (router + pod-name-label over HTTP) vs controller-runtime, both clients at QPS 100 (burst 200), 16 calls/workers');
    expect(text).toContain("(0) uncapped: kubeloop (router + pod-name-label over HTTP) vs controller-runtime, both clients at QPS 1000 (burst 2000), the tenants' shared budget the same");
    expect(text).toMatch(/existing 500 +throughput 1\.00x \(500 vs 500 pods\/s\) {2}CPU per pod 4\.00x \(router 3\.00 \+ function 1\.00 vs 1\.00 ms; router alone 3\.00x\)/);
    expect(text).toContain('batched (default) vs unbatched (spec.function.batch.enabled: false), same run');
    expect(text).toMatch(/existing 500 +HTTP requests\/pod 1\.00 vs 1\.00 {2}CPU ms\/pod router 3\.00 vs 4\.00 \(0\.75x\), function 1\.00 vs 2\.00 \(total 0\.67x\)/);
    expect(text).toContain('router RSS: idle 70.0 MiB (goal <= 70 MiB), peak with >= 2,000 pods 100.0 MiB (goal <= 120 MiB)');
    expect(text).toContain('function (pod-name-label) peak RSS over all runs: 90.0 MiB (goal <= 60 MiB');
  });
});

describe('formatVersus variants', () => {
  it('compares the router with writes over node:http2 (default) to the same run over undici, and only where both ran', () => {
    const text = formatVersus(
      [
        run({ cpuMs: 1500, functionCpuMs: 500 }),
        run({ side: 'undici-writes', cpuMs: 2000, functionCpuMs: 500, totalMs: 1250 }),
        run({ side: 'go', cpuMs: 500 }),
        run({ work: 'live' }),
        run({ side: 'go', work: 'live' }),
      ],
      16,
    ).join('\n');
    expect(text).toContain('writes over node:http2 (default) vs over undici (--http2-writes=false), same run');
    expect(text).toMatch(/existing 500 +HTTP requests\/pod 1\.00 vs 1\.00 {2}CPU ms\/pod router 3\.00 vs 4\.00 \(0\.75x\), function 1\.00 vs 1\.00 \(total 0\.80x\) {2}all labelled 1\.00 s vs 1\.25 s/);
    expect(text).not.toMatch(/live 500 +HTTP requests/);
    expect(text).not.toContain('batched (default) vs unbatched');
    // The variant is no Go comparison's kubeloop side.
    expect(compareSides([run({ side: 'undici-writes', totalMs: 9000 }), run({ totalMs: 1000 }), run({ side: 'go', totalMs: 1000 })])[0]!.throughput).toBe(1);
  });
});

describe('the Node floor', () => {
  it("sets the floor's CPU per pod against Go's and kubeloop's above it, per work item, with no function columns", () => {
    const runs = [
      run({ cpuMs: 1500, functionCpuMs: 500 }),
      run({ side: 'node-floor', cpuMs: 800, functionCpuMs: 0, totalMs: 800, peakRss: 40 * MiB }),
      run({ side: 'node-floor', cpuMs: 700, functionCpuMs: 0, totalMs: 1200, peakRss: 50 * MiB }),
      run({ side: 'go', cpuMs: 500, totalMs: 2000, peakRss: 30 * MiB }),
      // An item without the floor is not compared.
      run({ work: 'live', cpuMs: 1000 }),
      run({ work: 'live', side: 'go', cpuMs: 500 }),
    ];
    const [c, ...rest] = compareFloor(runs);
    expect(rest).toEqual([]);
    expect(c!.cpuPerPod).toEqual({ floor: 1.5, go: 1, router: 3, function: 1 });
    expect(c!.floorToGo).toBe(1.5);
    expect(c!.kubeloopToFloor).toBeCloseTo(4 / 1.5);
    expect(c!.throughput).toBe(2);
    expect(c!.peakRss).toEqual({ floor: 45 * MiB, go: 30 * MiB });
    const text = formatVersus(runs, 16).join('\n');
    expect(text).toContain("  Node's floor (bench/node-floor-controller.ts: list, watch and PATCH on node:http2, nothing else; with the hop: one POST per pod to the function) vs Go and kubeloop, same run");
    // Without a run of the floor with the hop, no hop line and no hop figures.
    expect(c!.hop).toBeUndefined();
    expect(text).not.toContain('the function hop');
    expect(text).toContain('    existing 500   CPU per pod floor 1.50 vs Go 1.00 ms (1.50x); kubeloop 4.00 ms = floor + 2.50 (2.67x the floor; the part above it 2.50 of Go\'s CPU per pod)  throughput floor / Go 2.00x  peak RSS 45.0 MiB vs 30.0 MiB');
    // The floor calls no function: its row leaves the function, calls and requests columns empty.
    const floorRow = text.split('\n').find((line) => line.startsWith('  node-floor'))!;
    expect(floorRow).toContain('               1.60                     0.00                        40.0 MiB');
    // And it is no kubeloop variant: the ratio line against Go is the router's alone.
    expect(text).toContain('CPU per pod 4.00x (router 3.00 + function 1.00 vs 1.00 ms');
  });

  it('prices the function hop as the floor with it against the floor alone, and kubeloop above the floor with the hop', () => {
    const runs = [
      run({ cpuMs: 1500, functionCpuMs: 500 }),
      run({ side: 'node-floor', cpuMs: 750, functionCpuMs: 0 }),
      run({ side: 'node-floor-hop', cpuMs: 900, functionCpuMs: 200, calls: 0, requests: 0 }),
      run({ side: 'node-floor-hop', cpuMs: 1100, functionCpuMs: 300, calls: 0, requests: 0 }),
      run({ side: 'go', cpuMs: 500 }),
    ];
    const [c] = compareFloor(runs);
    expect(c!.hop).toEqual({ controller: 2, function: 0.5 });
    const text = formatVersus(runs, 16).join('\n');
    expect(text).toContain("    existing 500   floor + the function hop 2.50 ms (controller 2.00 + function 0.50; 2.50x Go's): the hop 1.00 ms per pod (1.00 of Go's CPU per pod); kubeloop above the floor with the hop 1.50 ms (1.50 of Go's)");
    // Its row shows the function's CPU but no calls or requests: it counts none of its own.
    const hopRow = text.split('\n').find((line) => line.startsWith('  node-floor-hop'))!;
    expect(hopRow).toMatch(/ 1\.80 +0\.40 +0\.00 +100\.0 MiB/);
    // Every side's row, the longest name's too, starts its work column under the header's.
    const lines = text.split('\n');
    const header = lines.find((line) => line.startsWith('  side '))!;
    for (const side of ['kubeloop', 'node-floor', 'node-floor-hop', 'go']) {
      const row = lines.find((line) => line.startsWith(`  ${side} `))!;
      expect(row.indexOf(' existing') + 1, side).toBe(header.indexOf('work'));
    }
  });

  it('prints nothing of the floor without a run of it', () => {
    expect(compareFloor([run({}), run({ side: 'go' })])).toEqual([]);
    expect(formatVersus([run({}), run({ side: 'go' })], 16).join('\n')).not.toContain("Node's floor");
  });
});

describe('formatStartCpu', () => {
  it("splits the existing item's CPU per pod into the start (the live runs' reading) and the rest, against Go", () => {
    const lines = formatStartCpu([
      run({ mode: uncapped, cpuMs: 1500 }),
      run({ mode: uncapped, side: 'go', cpuMs: 400 }),
      run({ mode: uncapped, work: 'live', startCpuMs: 250 }),
      run({ mode: uncapped, side: 'go', work: 'live', startCpuMs: 50 }),
      // No live run in this mode: no start-up line for it.
      run({ side: 'go', cpuMs: 400 }),
    ]);
    expect(lines).toEqual(['  start-up CPU, uncapped (process start to synced, no pods): router 250 ms vs Go 50 ms; existing 500: start 0.50 vs 0.10 ms/pod, the rest 2.50 vs 0.70 ms/pod (router alone 3.57x)']);
  });

  it("names a variant's own start beside the router's, the baseline tree's for a change to start-up", () => {
    const lines = formatStartCpu([
      run({ mode: uncapped, work: 'live', startCpuMs: 160 }),
      run({ mode: uncapped, side: 'baseline', work: 'live', startCpuMs: 190 }),
      run({ mode: uncapped, side: 'go', work: 'live', startCpuMs: 20 }),
    ]);
    expect(lines).toEqual(['  start-up CPU, uncapped (process start to synced, no pods): router 160 ms (baseline 190 ms) vs Go 20 ms']);
  });
});

describe('formatFunctionCalls', () => {
  it("gives each side's mean function call with its rounds, and the mean of each place in the round, Go left out", () => {
    const lines = formatFunctionCalls([
      run({ mode: uncapped, functionCallMs: 18, position: 0 }),
      run({ mode: uncapped, side: 'baseline', functionCallMs: 14, position: 1 }),
      run({ mode: uncapped, side: 'go', position: 2 }),
      run({ mode: uncapped, side: 'baseline', functionCallMs: 17, position: 0 }),
      run({ mode: uncapped, side: 'go', position: 1 }),
      run({ mode: uncapped, functionCallMs: 13, position: 2 }),
      // Another item apart, one round: no place line.
      run({ mode: uncapped, work: 'live', functionCallMs: 20, position: 0 }),
    ]);
    expect(lines).toEqual([
      "  the function call, the router's mean in ms per side (each round's in brackets) and by the side's place in its round",
      '    uncapped existing 500  kubeloop 15.5 (18.0, 13.0), baseline 15.5 (14.0, 17.0); by place in the round: 1st 17.5, 2nd 14.0, 3rd 13.0',
      '    uncapped live 500      kubeloop 20.0',
    ]);
    expect(formatFunctionCalls([run({ side: 'go' })])).toEqual([]);
  });
});

describe('limitModes', () => {
  it('reads the modes with their QPS, burst twice that', () => {
    expect(limitModes('capped, uncapped', 100, 1500)).toEqual([capped, { name: 'uncapped', qps: 1500, burst: 3000 }]);
    expect(limitModes('uncapped', 100, 1000)).toEqual([uncapped]);
  });
  it('names a bad mode or QPS', () => {
    expect(() => limitModes('fast', 100, 1000)).toThrow('BENCH_VS_GO_MODES: "fast" is neither capped nor uncapped');
    expect(() => limitModes('uncapped', 100, Number.NaN)).toThrow("the uncapped mode's QPS must be a positive number");
  });
});

describe('workItems', () => {
  it('reads the work items in the order given', () => {
    expect(workItems('existing, live')).toEqual(['existing', 'live']);
    expect(workItems('live')).toEqual(['live']);
  });
  it('names a bad or empty list', () => {
    expect(() => workItems('there')).toThrow('BENCH_VS_GO_WORK: "there" is neither existing nor live');
    expect(() => workItems(' , ')).toThrow('BENCH_VS_GO_WORK names no work item');
  });
});

describe('formatNative', () => {
  it('sums each side\'s samples over its rounds, per pod of the work item, and prints nothing without BENCH_PERF', () => {
    const lines = formatNative([
      run({ native: { kernel: PERF_HZ, JavaScript: PERF_HZ } }),
      run({ native: { kernel: PERF_HZ } }),
      run({ side: 'go', native: { kernel: PERF_HZ / 2, 'other user': PERF_HZ } }),
      run({ side: 'go', pods: 2000 }),
    ]);
    expect(lines.slice(1)).toEqual([
      '    capped existing 500 kubeloop       3.00 ms/pod sampled = kernel 2.00, JavaScript 1.00',
      '    capped existing 500 go             3.00 ms/pod sampled = other user 2.00, kernel 1.00',
    ]);
    expect(formatNative([run({})])).toEqual([]);
  });
});
