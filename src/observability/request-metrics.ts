// The per-request metrics (`orq_requests_total{op,code}` and
// `orq_request_duration_seconds{op}`) kept as plain numbers in fixed tables,
// and turned into prom-client's exposition only when /metrics is scraped.
// prom-client's labelled `inc`/`observe` hash a label object into a string
// and allocate on every call (2-5% of server CPU in a profile,
// docs/decisions/021-request-metrics.md); here one answered request costs two
// Map lookups, a scan of the bucket bounds and four array writes, with no
// allocation. The op and code sets are closed (the contract's), so the tables
// never grow.

/** The one label value each unbounded input is folded into. */
export interface RequestLabelSets {
  /** Every op label that may appear; anything else counts as `unknownOp`. */
  ops: readonly string[];
  unknownOp: string;
  /** Every code label that may appear; anything else counts as `unknownCode`. */
  codes: readonly string[];
  unknownCode: string;
}

/** One exported sample, in the shape prom-client's Registry renders. */
interface SampleValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/**
 * What prom-client's Registry reads from a registered metric at scrape time
 * (`registerMetric` is typed for its own classes; the registry itself only
 * calls `get()`, reads name and type, and `reset()` on `resetMetrics`).
 * metrics.ts, the file that owns prom-client, registers these.
 */
export interface ScrapeTimeMetric {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  get(): Promise<{ name: string; help: string; type: string; aggregator: "sum"; values: SampleValue[] }>;
  reset(): void;
}

export class RequestMetrics {
  private readonly opIndex = new Map<string, number>();
  private readonly codeIndex = new Map<string, number>();
  private readonly opLabels: string[];
  private readonly codeLabels: string[];
  private readonly unknownOpIndex: number;
  private readonly unknownCodeIndex: number;
  private readonly bounds: Float64Array;
  /** Requests by [op * codeCount + code]. */
  private readonly counts: Float64Array;
  /** Observations by [op * (boundCount + 1) + bucket]; bucket boundCount is "above every bound". Not cumulative. */
  private readonly bucketCounts: Float64Array;
  private readonly sumsSeconds: Float64Array;
  private readonly observations: Float64Array;

  constructor(
    labels: RequestLabelSets,
    /** Upper bounds in seconds, ascending, as Prometheus exports them. */
    private readonly boundsSeconds: readonly number[],
  ) {
    this.opLabels = [...new Set([...labels.ops, labels.unknownOp])];
    this.codeLabels = [...new Set([...labels.codes, labels.unknownCode])];
    for (const [index, op] of this.opLabels.entries()) this.opIndex.set(op, index);
    for (const [index, code] of this.codeLabels.entries()) this.codeIndex.set(code, index);
    this.unknownOpIndex = this.opLabels.indexOf(labels.unknownOp);
    this.unknownCodeIndex = this.codeLabels.indexOf(labels.unknownCode);
    // Compared in seconds, as prom-client did, so a duration on a bound lands in the same bucket as before.
    this.bounds = Float64Array.from(boundsSeconds);
    this.counts = new Float64Array(this.opLabels.length * this.codeLabels.length);
    this.bucketCounts = new Float64Array(this.opLabels.length * (boundsSeconds.length + 1));
    this.sumsSeconds = new Float64Array(this.opLabels.length);
    this.observations = new Float64Array(this.opLabels.length);
  }

  /**
   * One answered request. A negative or non-finite duration (the wall clock
   * stepped back mid-request) counts as 0 rather than throwing on the
   * request path.
   */
  record(op: string, code: string, durationMs: number): void {
    const opAt = this.opIndex.get(op) ?? this.unknownOpIndex;
    const codeAt = this.codeIndex.get(code) ?? this.unknownCodeIndex;
    const seconds = durationMs >= 0 && durationMs < Number.POSITIVE_INFINITY ? durationMs / 1000 : 0;
    const bounds = this.bounds;
    let bucket = 0;
    while (bucket < bounds.length && seconds > (bounds[bucket] ?? 0)) bucket += 1;
    this.counts[opAt * this.codeLabels.length + codeAt] = (this.counts[opAt * this.codeLabels.length + codeAt] ?? 0) + 1;
    this.bucketCounts[opAt * (bounds.length + 1) + bucket] = (this.bucketCounts[opAt * (bounds.length + 1) + bucket] ?? 0) + 1;
    this.sumsSeconds[opAt] = (this.sumsSeconds[opAt] ?? 0) + seconds;
    this.observations[opAt] = (this.observations[opAt] ?? 0) + 1;
  }

  /** The counter and the histogram, for the registry: their values are read from the tables at each scrape. */
  scrapeTimeMetrics(names: { requests: string; requestsHelp: string; duration: string; durationHelp: string }): [ScrapeTimeMetric, ScrapeTimeMetric] {
    const counter: ScrapeTimeMetric = {
      name: names.requests,
      help: names.requestsHelp,
      type: "counter",
      aggregator: "sum",
      get: async () => ({ name: names.requests, help: names.requestsHelp, type: "counter", aggregator: "sum", values: this.counterValues() }),
      reset: () => this.counts.fill(0),
    };
    const histogram: ScrapeTimeMetric = {
      name: names.duration,
      help: names.durationHelp,
      type: "histogram",
      aggregator: "sum",
      get: async () => ({ name: names.duration, help: names.durationHelp, type: "histogram", aggregator: "sum", values: this.histogramValues(names.duration) }),
      reset: () => {
        this.bucketCounts.fill(0);
        this.sumsSeconds.fill(0);
        this.observations.fill(0);
      },
    };
    return [counter, histogram];
  }

  /** Series seen at least once, as prom-client's Counter reports them (never-seen pairs stay absent). */
  private counterValues(): SampleValue[] {
    const values: SampleValue[] = [];
    for (const [opAt, op] of this.opLabels.entries()) {
      for (const [codeAt, code] of this.codeLabels.entries()) {
        const value = this.counts[opAt * this.codeLabels.length + codeAt] ?? 0;
        if (value > 0) values.push({ labels: { op, code }, value });
      }
    }
    return values;
  }

  /** Cumulative buckets, +Inf, _sum (seconds) and _count per op observed, in prom-client's order and label order. */
  private histogramValues(name: string): SampleValue[] {
    const values: SampleValue[] = [];
    const stride = this.boundsSeconds.length + 1;
    for (const [opAt, op] of this.opLabels.entries()) {
      const count = this.observations[opAt] ?? 0;
      if (count === 0) continue;
      let cumulative = 0;
      for (const [bucket, bound] of this.boundsSeconds.entries()) {
        cumulative += this.bucketCounts[opAt * stride + bucket] ?? 0;
        values.push({ labels: { le: bound, op }, value: cumulative, metricName: `${name}_bucket` });
      }
      values.push({ labels: { le: "+Inf", op }, value: count, metricName: `${name}_bucket` });
      values.push({ labels: { op }, value: this.sumsSeconds[opAt] ?? 0, metricName: `${name}_sum` });
      values.push({ labels: { op }, value: count, metricName: `${name}_count` });
    }
    return values;
  }
}
