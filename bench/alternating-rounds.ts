// Variants measured in one run on a shared machine: a warm-up of each, then rounds in which the order rotates, so
// drift in the machine's load, and whatever the first of a round meets alone, falls on every variant alike.
export async function alternatingRounds<T>(variants: Record<string, T>, rounds: number, run: (variant: T) => Promise<number>): Promise<Record<string, number[]>> {
  const figures: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (const variant of Object.values(variants)) await run(variant); // warm-up: connections, JIT
  for (let round = 0; round < rounds; round++) {
    for (const [name, variant] of roundOrder(Object.entries(variants), round)) figures[name]!.push(await run(variant));
  }
  return figures;
}

/**
 * The order of round `round` (from 0): the variants rotated by one place a round, so that over n rounds each takes
 * each position once (two alternate); the next n rounds rotate the reversed list, so that over 2n rounds each also
 * follows each other equally often (in a plain rotation the same one always goes before it). Reversing every other
 * round instead would leave the middle ones of three or more always in the middle, never first.
 */
export function roundOrder<T>(variants: readonly T[], round: number): T[] {
  const n = variants.length;
  if (n === 0) return [];
  const cycle = Math.floor(round / n);
  const list = cycle % 2 === 0 ? [...variants] : [...variants].reverse();
  const shift = round - cycle * n;
  return [...list.slice(shift), ...list.slice(0, shift)];
}

export const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
