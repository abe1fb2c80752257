// The end of `npm run soak` (bench/soak/main.ts): from the 30-second samples,
// how flat memory and the delay tail stayed after the warm-up, and what the
// server logged at warn level or above (breaker transitions, slow commits,
// errors). Pure: samples and log text in, lines and figures out.
//
// Why growth is read three ways: RSS follows the collector's sawtooth (the
// heap fills with garbage for a few seconds, a full collection empties it;
// about 80 MiB from trough to peak in hour-long soaks), so two single
// samples, the first and the last, land anywhere on it and their ratio read
// -0.5% to +41% in soaks with no trend. A trend shows in the least-squares
// slope over every steady sample and in the medians of the first and last
// stretch of samples, which the sawtooth moves little; the first-to-last
// figure stays, named for what it is, beside the band the samples swing in.
// Each sample also carries its interval's RSS trough and peak (read every 500
// ms, sampleMemory in bench/load/processes.ts), and the same slope and end
// medians are read over the troughs and over the peaks: a leak lifts both,
// the sawtooth's phase moves neither.
//
// A run longer than an hour is also read per hour after the warm-up (the last
// hour may be shorter, down to half an hour): the soak's goal, memory and the
// delay tail flat, is about the hour after the warm-up, and a longer run's
// later hours show whether a climb in the first one levels off, which a slope
// over the whole run blurs.

import { median } from "../support/median.ts";

export interface SoakSample {
  /** Seconds since the load started. */
  atS: number;
  rssKiB: number;
  rssAnonKiB: number;
  rssFileKiB: number;
  /** The lowest and highest RSS (and RssAnon) read in the interval, every 500 ms (sampleMemory, bench/load/processes.ts). */
  rssTroughKiB: number;
  rssPeakKiB: number;
  rssAnonTroughKiB: number;
  rssAnonPeakKiB: number;
  deliveredPerS: number;
  enqueuedPerS: number;
  /** Items enqueued but not yet received by a consumer. */
  backlog: number;
  /** Enqueue-to-delivery delay of the items delivered in this interval. */
  delayP50Us: number;
  delayP99Us: number;
  delayMaxUs: number;
}

/** The trough and peak trends of one hour after the warm-up (see the file's comment). */
export interface SoakHourFigures {
  /** The window's bounds in seconds since the load started: samples with fromS < atS <= toS. */
  fromS: number;
  toS: number;
  samples: number;
  troughSlopePctPerHour: number;
  troughStretchGrowthPct: number;
  peakSlopePctPerHour: number;
  peakStretchGrowthPct: number;
}

export interface SoakFigures {
  samples: number;
  /** Samples after the warm-up (all of the second half when the run was shorter than the warm-up). */
  steadySamples: number;
  rssFirstKiB: number;
  rssLastKiB: number;
  rssMaxKiB: number;
  /** (last - first) / first over the steady samples, in percent: two single samples, so it reads the sawtooth's phase as much as any trend. */
  rssGrowthPct: number;
  rssAnonGrowthPct: number;
  /** Least-squares slope of RSS over the steady samples, per hour, in percent of their mean. */
  rssSlopePctPerHour: number;
  /** Samples in each end stretch of the median comparison: a tenth of a one-hour soak's (10), fewer for short runs. */
  rssEndStretchSamples: number;
  /** Median RSS of the first and of the last `rssEndStretchSamples` steady samples, and the change between them in percent. */
  rssFirstStretchMedianKiB: number;
  rssLastStretchMedianKiB: number;
  rssStretchGrowthPct: number;
  /** The 10th and 90th percentiles of the steady samples' RSS: the band the sawtooth swings in. */
  rssP10KiB: number;
  rssP90KiB: number;
  /** The same slope and end medians over the intervals' troughs and over their peaks. */
  troughSlopePctPerHour: number;
  troughFirstStretchMedianKiB: number;
  troughLastStretchMedianKiB: number;
  troughStretchGrowthPct: number;
  peakSlopePctPerHour: number;
  peakFirstStretchMedianKiB: number;
  peakLastStretchMedianKiB: number;
  peakStretchGrowthPct: number;
  /** The same trends per hour after the warm-up: one entry per hour the run covered (the last at least half an hour long). */
  hours: SoakHourFigures[];
  deliveredPerSMean: number;
  delayP99UsMin: number;
  delayP99UsMedian: number;
  delayP99UsMax: number;
  delayMaxUs: number;
  logWarnLines: number;
  logErrorLines: number;
  breakerTransitions: number;
  slowCommitReports: number;
  failure: string | null;
}

const mib = (kib: number) => (kib / 1024).toFixed(1);
const signed = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(1)}`;
const ms = (us: number) => (us / 1000).toFixed(2);
const pct = (from: number, to: number) => (from > 0 ? ((to - from) / from) * 100 : 0);
/** End stretches of the median comparison: 10 samples (5 minutes at the default interval), at most a third of the steady samples each. */
const endStretchSamplesMax = 10;
/** The per-hour windows: an hour each, and a last, shorter one only when it spans at least half of that. */
const hourWindowS = 3600;
const hourWindowShortestS = 1800;

/** Least-squares slope of y over x (per unit of x); 0 with fewer than two distinct x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const meanX = xs.reduce((a, b) => a + b, 0) / n;
  const meanY = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] as number) - meanX;
    num += dx * ((ys[i] as number) - meanY);
    den += dx * dx;
  }
  return den === 0 ? 0 : num / den;
}

/** Slope (per hour, in percent of the mean) and end-stretch medians of one series of steady samples (see the file's comment). */
function trend(steady: SoakSample[], kib: (s: SoakSample) => number) {
  const values = steady.map(kib);
  const meanKiB = values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
  const kibPerS = slope(steady.map((s) => s.atS), values);
  const stretch = Math.max(1, Math.min(endStretchSamplesMax, Math.floor(values.length / 3)));
  const firstMedian = median(values.slice(0, stretch));
  const lastMedian = median(values.slice(-stretch));
  return {
    slopePctPerHour: meanKiB > 0 ? ((kibPerS * 3600) / meanKiB) * 100 : 0,
    stretch: values.length === 0 ? 0 : stretch,
    firstMedian,
    lastMedian,
    growthPct: pct(firstMedian, lastMedian),
  };
}

/** The RSS trend figures of the steady samples: the 30-second readings, their troughs and their peaks. */
function rssTrend(steady: SoakSample[]) {
  const rss = trend(steady, (s) => s.rssKiB);
  const trough = trend(steady, (s) => s.rssTroughKiB);
  const peak = trend(steady, (s) => s.rssPeakKiB);
  const sorted = steady.map((s) => s.rssKiB).sort((a, b) => a - b);
  return {
    rssSlopePctPerHour: rss.slopePctPerHour,
    rssEndStretchSamples: rss.stretch,
    rssFirstStretchMedianKiB: rss.firstMedian,
    rssLastStretchMedianKiB: rss.lastMedian,
    rssStretchGrowthPct: rss.growthPct,
    rssP10KiB: sorted[Math.floor((sorted.length - 1) * 0.1)] ?? 0,
    rssP90KiB: sorted[Math.ceil((sorted.length - 1) * 0.9)] ?? 0,
    troughSlopePctPerHour: trough.slopePctPerHour,
    troughFirstStretchMedianKiB: trough.firstMedian,
    troughLastStretchMedianKiB: trough.lastMedian,
    troughStretchGrowthPct: trough.growthPct,
    peakSlopePctPerHour: peak.slopePctPerHour,
    peakFirstStretchMedianKiB: peak.firstMedian,
    peakLastStretchMedianKiB: peak.lastMedian,
    peakStretchGrowthPct: peak.growthPct,
  };
}

/** The steady samples cut into hours from `fromS` on (see SoakHourFigures). */
function hourTrends(steady: SoakSample[], fromS: number): SoakHourFigures[] {
  const lastAtS = steady.length === 0 ? fromS : (steady[steady.length - 1] as SoakSample).atS;
  const hours: SoakHourFigures[] = [];
  for (let startS = fromS; lastAtS - startS >= hourWindowShortestS; startS += hourWindowS) {
    const endS = startS + hourWindowS;
    const inHour = steady.filter((s) => s.atS > startS && s.atS <= endS);
    const trough = trend(inHour, (s) => s.rssTroughKiB);
    const peak = trend(inHour, (s) => s.rssPeakKiB);
    hours.push({
      fromS: startS,
      toS: Math.min(endS, lastAtS),
      samples: inHour.length,
      troughSlopePctPerHour: trough.slopePctPerHour,
      troughStretchGrowthPct: trough.growthPct,
      peakSlopePctPerHour: peak.slopePctPerHour,
      peakStretchGrowthPct: peak.growthPct,
    });
  }
  return hours;
}

export function soakSummary(samples: SoakSample[], warmupS: number, serverLog: string, failure: Error | null): { lines: string[]; figures: SoakFigures } {
  let steady = samples.filter((s) => s.atS > warmupS);
  let steadyFromS = warmupS;
  if (steady.length === 0) {
    const half = Math.floor(samples.length / 2);
    steady = samples.slice(half);
    // The windows start just before the first steady sample, so it falls in the first.
    steadyFromS = samples[half - 1]?.atS ?? 0;
  }
  const levels = serverLog
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level?: string; msg?: string });
  const p99s = steady.map((s) => s.delayP99Us).sort((a, b) => a - b);
  const first = steady[0];
  const last = steady[steady.length - 1];
  const figures: SoakFigures = {
    samples: samples.length,
    steadySamples: steady.length,
    rssFirstKiB: first?.rssKiB ?? 0,
    rssLastKiB: last?.rssKiB ?? 0,
    rssMaxKiB: Math.max(0, ...steady.map((s) => s.rssKiB)),
    rssGrowthPct: pct(first?.rssKiB ?? 0, last?.rssKiB ?? 0),
    rssAnonGrowthPct: pct(first?.rssAnonKiB ?? 0, last?.rssAnonKiB ?? 0),
    ...rssTrend(steady),
    hours: hourTrends(steady, steadyFromS),
    deliveredPerSMean: steady.length === 0 ? 0 : steady.reduce((sum, s) => sum + s.deliveredPerS, 0) / steady.length,
    delayP99UsMin: p99s[0] ?? 0,
    delayP99UsMedian: p99s[Math.floor(p99s.length / 2)] ?? 0,
    delayP99UsMax: p99s[p99s.length - 1] ?? 0,
    delayMaxUs: Math.max(0, ...samples.map((s) => s.delayMaxUs)),
    logWarnLines: levels.filter((l) => l.level === "warn").length,
    logErrorLines: levels.filter((l) => l.level === "error" || l.level === "fatal").length,
    breakerTransitions: levels.filter((l) => l.msg === "storage breaker transition").length,
    slowCommitReports: levels.filter((l) => l.msg?.startsWith("slow storage commits") === true).length,
    failure: failure === null ? null : failure.message,
  };
  const lines = [
    `soak summary: ${figures.samples} samples, ${figures.steadySamples} after the warm-up`,
    `  RSS trend after warm-up: slope ${signed(figures.rssSlopePctPerHour)}% of the mean per hour; median of the first ${figures.rssEndStretchSamples} samples ${mib(figures.rssFirstStretchMedianKiB)} MiB, of the last ${figures.rssEndStretchSamples} ${mib(figures.rssLastStretchMedianKiB)} MiB (${signed(figures.rssStretchGrowthPct)}%)`,
    `  RSS troughs per interval (lowest of the readings every 500 ms): slope ${signed(figures.troughSlopePctPerHour)}% per hour; end medians ${mib(figures.troughFirstStretchMedianKiB)} -> ${mib(figures.troughLastStretchMedianKiB)} MiB (${signed(figures.troughStretchGrowthPct)}%)`,
    `  RSS peaks per interval: slope ${signed(figures.peakSlopePctPerHour)}% per hour; end medians ${mib(figures.peakFirstStretchMedianKiB)} -> ${mib(figures.peakLastStretchMedianKiB)} MiB (${signed(figures.peakStretchGrowthPct)}%)`,
    ...(figures.hours.length < 2
      ? []
      : figures.hours.map(
          (hour, index) =>
            `  hour ${index + 1} after warm-up (${Math.round(hour.fromS)}-${Math.round(hour.toS)} s, ${hour.samples} samples): troughs slope ${signed(hour.troughSlopePctPerHour)}% per hour, end medians ${signed(hour.troughStretchGrowthPct)}%; peaks slope ${signed(hour.peakSlopePctPerHour)}% per hour, end medians ${signed(hour.peakStretchGrowthPct)}%`,
        )),
    `  RSS band after warm-up: p10 ${mib(figures.rssP10KiB)}, p90 ${mib(figures.rssP90KiB)}, max ${mib(figures.rssMaxKiB)} MiB; single samples, first -> last: ${mib(figures.rssFirstKiB)} -> ${mib(figures.rssLastKiB)} MiB (${signed(figures.rssGrowthPct)}%, anonymous ${signed(figures.rssAnonGrowthPct)}%)`,
    `  delivered ${Math.round(figures.deliveredPerSMean)}/s on average after warm-up`,
    `  delay p99 per interval after warm-up: min ${ms(figures.delayP99UsMin)}, median ${ms(figures.delayP99UsMedian)}, max ${ms(figures.delayP99UsMax)} ms; largest delay ${ms(figures.delayMaxUs)} ms`,
    `  server log: ${figures.logWarnLines} warn, ${figures.logErrorLines} error/fatal lines; ${figures.breakerTransitions} breaker transitions, ${figures.slowCommitReports} slow-commit reports`,
    figures.failure === null ? "  requests: no errors" : `  FAILED: ${figures.failure}`,
  ];
  return { lines, figures };
}
