// The dashboard's bounded in-memory history: per namespace its counters and
// state counts, per topic its state counts, sampled every
// historyFineSampleMs into a ring of historyFineSamples (an hour), and every
// historyCoarseSampleMs into a ring of historyCoarseSamples (a day). At most
// historyNamespacesMax namespaces and historyTopicsMax topics have one;
// later names get none, and a name that stops appearing in the samples is
// dropped after a day so its slot is free again. Rates are differences of
// counters between samples. Nothing here reads the time: record() is given
// nowMs (the dashboard server's one sampling timer passes the clock's).

import { dashboardLimits } from "../limits.ts";
import { liveStateNames } from "../protocol/live-states.ts";

/** Fixed-capacity columns of numbers with one timestamp per row. */
export class SeriesRing {
  private readonly times: Float64Array;
  private readonly columns: Float64Array[];
  private start = 0;
  length = 0;

  constructor(
    readonly capacity: number,
    columnCount: number,
  ) {
    this.times = new Float64Array(capacity);
    this.columns = Array.from({ length: columnCount }, () => new Float64Array(capacity));
  }

  push(timeMs: number, values: readonly number[]): void {
    const at = (this.start + this.length) % this.capacity;
    this.times[at] = timeMs;
    for (let c = 0; c < this.columns.length; c++) (this.columns[c] as Float64Array)[at] = values[c] ?? 0;
    if (this.length < this.capacity) this.length++;
    else this.start = (this.start + 1) % this.capacity;
  }

  /** Oldest first: the timestamps and one array per column. */
  read(): { timesMs: number[]; columns: number[][] } {
    const timesMs: number[] = [];
    const columns: number[][] = this.columns.map(() => []);
    for (let i = 0; i < this.length; i++) {
      const at = (this.start + i) % this.capacity;
      timesMs.push(this.times[at] as number);
      for (let c = 0; c < this.columns.length; c++) (columns[c] as number[]).push((this.columns[c] as Float64Array)[at] as number);
    }
    return { timesMs, columns };
  }
}

export type Range = "hour" | "day";

/** A fine ring (every sample) and a coarse ring (one sample per coarse period). */
class TieredSeries {
  readonly fine: SeriesRing;
  readonly coarse: SeriesRing;
  private lastCoarseMs = Number.NEGATIVE_INFINITY;
  lastSeenMs = 0;

  constructor(columnCount: number) {
    this.fine = new SeriesRing(dashboardLimits.historyFineSamples, columnCount);
    this.coarse = new SeriesRing(dashboardLimits.historyCoarseSamples, columnCount);
  }

  record(nowMs: number, values: readonly number[]): void {
    this.lastSeenMs = nowMs;
    this.fine.push(nowMs, values);
    if (nowMs - this.lastCoarseMs >= dashboardLimits.historyCoarseSampleMs) {
      this.coarse.push(nowMs, values);
      this.lastCoarseMs = nowMs;
    }
  }

  ring(range: Range): SeriesRing {
    return range === "hour" ? this.fine : this.coarse;
  }
}

/** The live states, one column each, in the contract's order. */
export const stateColumns = liveStateNames;
export const counterColumns = ["enqueued", "delivered", "acked", "nacked", "dead"] as const;

/** What one sample holds for one namespace (from the `stats` op's reply). */
export interface NamespaceSample {
  states: Record<(typeof stateColumns)[number], number>;
  counters: Record<(typeof counterColumns)[number], number>;
  topics: Map<string, Record<(typeof stateColumns)[number], number>>;
}

/** A name is dropped when it has not appeared in a sample for this long (a day: the coarse ring's span). */
const forgetAfterMs = dashboardLimits.historyCoarseSampleMs * dashboardLimits.historyCoarseSamples;

export class History {
  private readonly namespaces = new Map<string, TieredSeries>();
  private readonly topics = new Map<string, TieredSeries>();

  get namespaceCount(): number {
    return this.namespaces.size;
  }

  get topicCount(): number {
    return this.topics.size;
  }

  record(nowMs: number, samples: ReadonlyMap<string, NamespaceSample>): void {
    for (const [ns, sample] of samples) {
      let series = this.namespaces.get(ns);
      if (series === undefined && this.namespaces.size < dashboardLimits.historyNamespacesMax) {
        series = new TieredSeries(stateColumns.length + counterColumns.length);
        this.namespaces.set(ns, series);
      }
      series?.record(nowMs, [...stateColumns.map((s) => sample.states[s]), ...counterColumns.map((c) => sample.counters[c])]);
      for (const [topic, states] of sample.topics) {
        const key = topicKey(ns, topic);
        let topicSeries = this.topics.get(key);
        if (topicSeries === undefined && this.topics.size < dashboardLimits.historyTopicsMax) {
          topicSeries = new TieredSeries(stateColumns.length);
          this.topics.set(key, topicSeries);
        }
        topicSeries?.record(nowMs, stateColumns.map((s) => states[s]));
      }
    }
    for (const map of [this.namespaces, this.topics]) {
      for (const [key, series] of map) if (nowMs - series.lastSeenMs > forgetAfterMs) map.delete(key);
    }
  }

  /** Whether a namespace / topic has a history (false past the limits). */
  hasNamespace(ns: string): boolean {
    return this.namespaces.has(ns);
  }

  hasTopic(ns: string, topic: string): boolean {
    return this.topics.has(topicKey(ns, topic));
  }

  /** State counts over time, one column per state. */
  depths(ns: string, range: Range): { timesMs: number[]; columns: number[][] } | null {
    const data = this.namespaces.get(ns)?.ring(range).read();
    if (data === undefined) return null;
    return { timesMs: data.timesMs, columns: data.columns.slice(0, stateColumns.length) };
  }

  /** Counter rates per second between consecutive samples, one column per counter (the first sample has none). */
  rates(ns: string, range: Range): { timesMs: number[]; columns: number[][] } | null {
    const data = this.namespaces.get(ns)?.ring(range).read();
    if (data === undefined) return null;
    const counters = data.columns.slice(stateColumns.length);
    const timesMs = data.timesMs.slice(1);
    const columns = counters.map((column) =>
      timesMs.map((t, i) => {
        const seconds = (t - (data.timesMs[i] as number)) / 1000;
        // A counter only falls when the server restarted; a restart empties the history too, so clamp at 0.
        return seconds > 0 ? Math.max(0, ((column[i + 1] as number) - (column[i] as number)) / seconds) : 0;
      }),
    );
    return { timesMs, columns };
  }

  /** Total depth (every state) of one topic over time. */
  topicDepths(ns: string, topic: string, range: Range): { timesMs: number[]; totals: number[] } | null {
    const data = this.topics.get(topicKey(ns, topic))?.ring(range).read();
    if (data === undefined) return null;
    return { timesMs: data.timesMs, totals: data.timesMs.map((_, i) => data.columns.reduce((sum, column) => sum + (column[i] as number), 0)) };
  }
}

function topicKey(ns: string, topic: string): string {
  // JSON keeps the pair unambiguous whatever characters the names hold.
  return JSON.stringify([ns, topic]);
}

function numberAt(record: unknown, key: string): number {
  const value = typeof record === "object" && record !== null ? (record as Record<string, unknown>)[key] : undefined;
  return typeof value === "number" ? value : 0;
}

/** One sample per namespace from a `stats` op reply (wire form). */
export function samplesFromStats(reply: Record<string, unknown>): Map<string, NamespaceSample> {
  const out = new Map<string, NamespaceSample>();
  const namespaces = (reply.namespaces ?? {}) as Record<string, Record<string, unknown>>;
  for (const [ns, entry] of Object.entries(namespaces)) {
    const topics = new Map<string, NamespaceSample["states"]>();
    for (const [topic, counts] of Object.entries((entry.topics ?? {}) as Record<string, unknown>)) {
      topics.set(topic, Object.fromEntries(stateColumns.map((s) => [s, numberAt(counts, s)])) as NamespaceSample["states"]);
    }
    out.set(ns, {
      states: Object.fromEntries(stateColumns.map((s) => [s, numberAt(entry, s)])) as NamespaceSample["states"],
      counters: Object.fromEntries(counterColumns.map((c) => [c, numberAt(entry.counters, c)])) as NamespaceSample["counters"],
      topics,
    });
  }
  return out;
}
