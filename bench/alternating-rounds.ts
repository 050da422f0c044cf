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
 * each position once (two alternate). Reversing every other round would leave the middle ones of three or more
 * always in the middle, never first.
 */
export function roundOrder<T>(variants: readonly T[], round: number): T[] {
  const shift = variants.length === 0 ? 0 : ((round % variants.length) + variants.length) % variants.length;
  return [...variants.slice(shift), ...variants.slice(0, shift)];
}

export const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
