// Variants measured in one run on a shared machine: a warm-up of each, then rounds in which the order flips, so
// drift in the machine's load falls on every variant alike.
export async function alternatingRounds<T>(variants: Record<string, T>, rounds: number, run: (variant: T) => Promise<number>): Promise<Record<string, number[]>> {
  const figures: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (const variant of Object.values(variants)) await run(variant); // warm-up: connections, JIT
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? Object.entries(variants) : Object.entries(variants).reverse();
    for (const [name, variant] of order) figures[name]!.push(await run(variant));
  }
  return figures;
}

export const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
