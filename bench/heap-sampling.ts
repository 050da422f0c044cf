// BENCH_HEAP_PROF=<dir>: a bench child samples what it allocates with V8's sampling heap profiler, objects collected
// since included, so the profile sums every byte allocated and where (bench/heap-profile-summary.ts reads it).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One sample per this many bytes allocated, on average: fine enough for per-pod figures over a few hundred pods. */
const SAMPLING_INTERVAL_BYTES = 1024;

export interface HeapSampling {
  /** Writes the profile to `<dir>/<name>-<pid>.heapprofile` and stops sampling. */
  stop(): Promise<string>;
}

/** Starts sampling when BENCH_HEAP_PROF is set; undefined (nothing started) otherwise. */
export function startHeapSampling(name: string, dir = process.env.BENCH_HEAP_PROF): HeapSampling | undefined {
  if (!dir) return undefined;
  // Resolved at run time: the router child may be restored from a snapshot, which has no import().
  const inspector = process.getBuiltinModule('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = <T>(method: string, params?: object) =>
    new Promise<T>((resolve, reject) => (session.post as (m: string, p: object | undefined, cb: (e: Error | null, r: T) => void) => void)(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  const started = post('HeapProfiler.startSampling', {
    samplingInterval: SAMPLING_INTERVAL_BYTES,
    // Without these V8 drops a sample when its object dies: the profile would say what is live, not what was allocated.
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return {
    async stop() {
      await started;
      const { profile } = await post<{ profile: unknown }>('HeapProfiler.getSamplingProfile');
      await post('HeapProfiler.stopSampling');
      session.disconnect();
      const file = join(dir, `${name}-${process.pid}.heapprofile`);
      await writeFile(file, JSON.stringify(profile));
      return file;
    },
  };
}
