// What a window of work leaves in V8's old generation: a full GC first, so that what is counted is what the window
// added (promoted, or allocated there directly), read from the old space's use at its end.
import { Session } from 'node:inspector/promises';
import v8 from 'node:v8';

const oldSpaceUsed = (): number => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')?.space_used_size ?? 0;

/** Collects garbage, then returns what reads the old space's growth since (bytes). */
export async function oldGenerationGrowth(): Promise<() => number> {
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.collectGarbage');
  } finally {
    session.disconnect();
  }
  const before = oldSpaceUsed();
  return () => oldSpaceUsed() - before;
}
