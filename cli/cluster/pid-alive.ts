// Whether a process exists, by signal 0. EPERM means it exists but belongs to someone else: alive.
// (orphan-reaper.ts holds the same rule inline, in the plain-JS script it spawns.)

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
