// The end of `npm run soak` (scripts/soak.ts): from the 30-second samples,
// how flat memory and the delay tail stayed after the warm-up, and what the
// server logged at warn level or above (breaker transitions, slow commits,
// errors). Pure: samples and log text in, lines and figures out.

export interface SoakSample {
  /** Seconds since the load started. */
  atS: number;
  rssKiB: number;
  rssAnonKiB: number;
  rssFileKiB: number;
  deliveredPerS: number;
  enqueuedPerS: number;
  /** Items enqueued but not yet received by a consumer. */
  backlog: number;
  /** Enqueue-to-delivery delay of the items delivered in this interval. */
  delayP50Us: number;
  delayP99Us: number;
  delayMaxUs: number;
}

export interface SoakFigures {
  samples: number;
  /** Samples after the warm-up (all of the second half when the run was shorter than the warm-up). */
  steadySamples: number;
  rssFirstKiB: number;
  rssLastKiB: number;
  rssMaxKiB: number;
  /** (last - first) / first over the steady samples, in percent. */
  rssGrowthPct: number;
  rssAnonGrowthPct: number;
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
const ms = (us: number) => (us / 1000).toFixed(2);
const pct = (from: number, to: number) => (from > 0 ? ((to - from) / from) * 100 : 0);

export function soakSummary(samples: SoakSample[], warmupS: number, serverLog: string, failure: Error | null): { lines: string[]; figures: SoakFigures } {
  let steady = samples.filter((s) => s.atS > warmupS);
  if (steady.length === 0) steady = samples.slice(Math.floor(samples.length / 2));
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
    `  RSS after warm-up: ${mib(figures.rssFirstKiB)} -> ${mib(figures.rssLastKiB)} MiB (${figures.rssGrowthPct.toFixed(1)}%, anonymous ${figures.rssAnonGrowthPct.toFixed(1)}%), max ${mib(figures.rssMaxKiB)} MiB`,
    `  delivered ${Math.round(figures.deliveredPerSMean)}/s on average after warm-up`,
    `  delay p99 per interval after warm-up: min ${ms(figures.delayP99UsMin)}, median ${ms(figures.delayP99UsMedian)}, max ${ms(figures.delayP99UsMax)} ms; largest delay ${ms(figures.delayMaxUs)} ms`,
    `  server log: ${figures.logWarnLines} warn, ${figures.logErrorLines} error/fatal lines; ${figures.breakerTransitions} breaker transitions, ${figures.slowCommitReports} slow-commit reports`,
    figures.failure === null ? "  requests: no errors" : `  FAILED: ${figures.failure}`,
  ];
  return { lines, figures };
}
