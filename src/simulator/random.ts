/**
 * A small seeded PRNG (mulberry32) so that the same seed always yields the same store data: tests and
 * benchmarks can rely on exact item codes, names and sales.
 */

/** A deterministic random source with the helpers the data generators need. */
export class Random {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A decimal in [min, max) rounded to cents. */
  money(min: number, max: number): number {
    return Math.round((min + this.next() * (max - min)) * 100) / 100;
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty list. */
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)] as T;
  }

  /** A string of `length` decimal digits. */
  digits(length: number): string {
    let out = '';
    for (let i = 0; i < length; i += 1) out += String(Math.floor(this.next() * 10));
    return out;
  }
}
