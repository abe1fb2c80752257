// Times the pick inside real dequeues, for the matching-pick and group-pick
// benches: wraps the engine methods that choose the item (a prototype and a
// method name each) so that, while `samples` is set, each call's time is
// added to `samples[call]`. When one wrapped method calls another (a group
// rotation asking a heap for its best item), only the outermost call is
// timed, so nothing is counted twice. Bun.nanoseconds() around each call;
// percentiles come from the sorted array of every sample, so GC pauses land
// in the calls they interrupt and p99 includes them.

export interface PickTimer {
  /** Where the current pass's times go; null: the wrapped methods run untimed. */
  samples: Float64Array | null;
  /** The dequeue being timed: its index in `samples`. */
  call: number;
  /** Outermost wrapped calls timed so far: a pass that saw none did not time the pick. */
  observed: number;
}

export interface PickMethod {
  owner: object;
  method: string;
}

/** Wraps each method once (a bench wraps at load, before any engine runs). Up to three arguments are passed through. */
export function timePick(methods: PickMethod[]): PickTimer {
  const timer: PickTimer = { samples: null, call: 0, observed: 0 };
  let depth = 0;
  for (const { owner, method } of methods) {
    const table = owner as Record<string, unknown>;
    const original = table[method];
    if (typeof original !== "function") throw new Error(`pick timing: no method ${method}`);
    table[method] = function (this: unknown, a: unknown, b: unknown, c: unknown): unknown {
      const samples = timer.samples;
      if (samples === null || depth > 0) return original.call(this, a, b, c);
      depth++;
      const started = Bun.nanoseconds();
      const result = original.call(this, a, b, c);
      samples[timer.call] = (samples[timer.call] as number) + (Bun.nanoseconds() - started);
      depth--;
      timer.observed++;
      return result;
    };
  }
  return timer;
}

export function percentile(sorted: Float64Array, fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] as number;
}

export const us = (ns: number): string => `${(ns / 1000).toFixed(2)} µs`;

/** "p50 .. p90 .. p99 .. p99.9 .. mean .." of sorted nanosecond samples. */
export function summary(sorted: Float64Array): string {
  let totalNs = 0;
  for (const sample of sorted) totalNs += sample;
  return `p50 ${us(percentile(sorted, 0.5))}  p90 ${us(percentile(sorted, 0.9))}  p99 ${us(percentile(sorted, 0.99))}  p99.9 ${us(percentile(sorted, 0.999))}  mean ${us(totalNs / sorted.length)}`;
}

/** The percentiles a result file keeps, in µs. */
export function percentilesUs(sorted: Float64Array): { p50Us: number; p90Us: number; p99Us: number; p999Us: number } {
  const at = (fraction: number) => Math.round(percentile(sorted, fraction)) / 1000;
  return { p50Us: at(0.5), p90Us: at(0.9), p99Us: at(0.99), p999Us: at(0.999) };
}
