// The crash tests' one source of randomness: a seeded generator (mulberry32),
// so a failing run can be replayed from the seed it printed. The seed fixes the
// schedule (kill delays, batch sizes, which deliveries get acked); the exact
// moment a SIGKILL lands still depends on the machine's timing.

import { seededRandom } from "./seeded-random.ts";

export class CrashRandom {
  private readonly draw: () => number;

  constructor(readonly seed: number) {
    this.draw = seededRandom(seed);
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.draw();
  }

  /** Integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** A child generator for one round or one connection, independent of how much the parent drew since. */
  fork(salt: number): CrashRandom {
    return new CrashRandom((this.seed ^ Math.imul(salt + 1, 0x9e3779b1)) >>> 0);
  }
}

/** A fresh seed for a run that was not given one. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 0xffff_ffff) >>> 0;
}
