// A small, fast, seedable generator: the same seed gives the same data on every machine and
// Node version (Math.random cannot be seeded).

/** Mixes a seed and a row index into an independent 32-bit state (splitmix-style finaliser). */
export function mix(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** mulberry32: a uniform float in [0, 1) per call. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** Skewed towards the front of the list, as word frequencies in real text are. */
  pickSkewed<T>(items: readonly T[]): T {
    const u = this.next();
    return items[Math.floor(u * u * items.length)];
  }

  chance(p: number): boolean {
    return this.next() < p;
  }
}
