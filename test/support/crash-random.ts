// The crash tests' one source of randomness: a seeded generator (mulberry32),
// so a failing run can be replayed from the seed it printed. The seed fixes the
// schedule (kill delays, batch sizes, which deliveries get acked); the exact
// moment a SIGKILL lands still depends on the machine's timing.

export class CrashRandom {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
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
