// Runs a CLI command's run(argv) in-process and collects what it prints (stdout and stderr lines, in order).
import { vi } from 'vitest';

export async function captureCommand(run: (argv: string[]) => Promise<number>, argv: string[]): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
  const error = vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
  try {
    return { code: await run(argv), output: lines.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}
