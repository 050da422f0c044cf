import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { categoryOf, formatSplit, PERF_HZ, samplePerf, splitOfReport } from './native-split.ts';

// Lines of `perf report --sort dso,sym --stdio -n` as perf printed them for the router, and one of the Go baseline.
const REPORT = `# Samples: 1K of event 'cpu-clock:ppp'
#
     4.83%            88  [kernel.kallsyms]    [k] finish_task_switch.isra.0
     2.36%            43  node                 [.] Builtins_LoadIC
     1.92%            35  node                 [.] v8::internal::Scavenger::ScavengeObject<v8::internal::FullHeapObjectSlot>
     0.88%            16  libc.so.6            [.] malloc
     0.49%             9  node                 [.] v8::internal::JsonStringifier::SerializeString<false>
     0.44%             8  [JIT] tid 7373       [.] JS:+'insert node:internal/timers:426:16
     0.27%             5  node                 [.] ossl_aes_gcm_decrypt_avx512
     0.22%             4  node                 [.] nghttp2_session_mem_recv2
     0.16%             3  node                 [.] v8::internal::maglev::MergePointInterpreterFrameState::New
     0.16%             3  node                 [.] node::BaseObject::increase_refcount
    25.65%           177  [kernel.kallsyms]                 [k] finish_task_switch.isra.0
    40.00%           270  baseline-controller-89b5d556fd56  [.] 0x00000000004a1b2c
`;

describe('the native split of a controller CPU (BENCH_PERF)', () => {
  it('files each sample by what ran', () => {
    expect(splitOfReport(REPORT)).toEqual({
      kernel: 88 + 177,
      'IC and builtins': 43,
      GC: 35,
      'malloc and libc': 16,
      JSON: 9,
      JavaScript: 8,
      TLS: 5,
      'HTTP parsing': 4,
      compilers: 3,
      'other user': 3 + 270,
    });
  });

  it('reads JIT code without a perf map as JavaScript, and a stripped binary as the rest', () => {
    expect(categoryOf('[unknown]', '0x00007f3a2c01')).toBe('JavaScript');
    expect(categoryOf('baseline-controller-1', '0x00000000004a1b2c')).toBe('other user');
  });

  it('prints CPU ms per pod by category, largest first', () => {
    const oneSecond = PERF_HZ;
    expect(formatSplit({ kernel: oneSecond, GC: 2 * oneSecond }, 1000)).toBe('3.00 ms/pod sampled = GC 2.00, kernel 1.00');
  });
});

describe('samplePerf', () => {
  it('samples nothing without BENCH_PERF\'s directory', () => {
    expect(samplePerf(process.pid, 'none', '')).toBeUndefined();
  });

  it('gives no split, and neither hangs nor throws, when perf cannot be started', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'native-split-'));
    const said = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const sampling = samplePerf(process.pid, 'missing', dir, 'kubeloop-no-such-perf');
      await expect(sampling!.stop()).resolves.toBeUndefined();
      expect(said.mock.calls[0]?.[0]).toMatch(/no split for missing: kubeloop-no-such-perf: .*ENOENT.*needs Linux perf/);
    } finally {
      said.mockRestore();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
