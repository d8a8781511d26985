/**
 * The soak's only source of randomness: a small seeded generator (sfc32, 32-bit state words), so
 * one seed always yields the same plan. Nothing in the soak calls Math.random.
 */

/** A deterministic random source; every method advances the same stream. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max], both included. */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A new array with `items` in random order (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[];
}

/** Parses `--seed`: a non-negative integer below 2^32. */
export function parseSeed(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 0xffff_ffff) throw new Error(`--seed must be an integer in [0, ${0xffff_ffff}], got ${JSON.stringify(text)}`);
  return Number(text);
}

/** A fresh seed for a run that was not given one (printed, so it can be replayed). */
export function randomSeed(): number {
  return (Date.now() ^ (process.pid << 16)) >>> 0;
}

export function createRng(seed: number): Rng {
  // sfc32 seeded through splitmix32, so neighbouring seeds give unrelated streams.
  let s = seed >>> 0;
  const split = (): number => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split(), b = split(), c = split(), d = split();
  const next = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 0x1_0000_0000;
  };
  for (let i = 0; i < 12; i++) next();
  const rng: Rng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)]!;
    },
    shuffle: (items) => {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
  };
  return rng;
}
