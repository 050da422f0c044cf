// A Loop's periodic resync: `resync` every resyncMs, jittered ±10 % each time so Loops (and replicas) do not resync
// in step; unref'd, so it never holds a process open. Returns what stops it.
export function startResync(resyncMs: number, resync: () => void, random: () => number = Math.random): () => void {
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    timer = setTimeout(() => {
      resync();
      schedule();
    }, resyncMs * (0.9 + random() * 0.2));
    timer.unref();
  };
  schedule();
  return () => clearTimeout(timer);
}
