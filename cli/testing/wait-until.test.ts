import { describe, expect, it } from 'vitest';
import { waitUntil } from './wait-until.ts';

describe('waitUntil', () => {
  it('returns the first value that is neither undefined nor false', async () => {
    const answers = [undefined, false, 0, 5];
    expect(await waitUntil('a number', async () => answers.shift(), 5_000, 1)).toBe(0);
  });

  it('times out naming what it waited for and the last error the check threw', async () => {
    await expect(
      waitUntil('Loop team-a/web condition Ready=True', async () => {
        throw new Error('connection refused');
      }, 20, 1),
    ).rejects.toThrow(/timed out after 0 s waiting for Loop team-a\/web condition Ready=True \(last error: connection refused\)/);
  });
});
