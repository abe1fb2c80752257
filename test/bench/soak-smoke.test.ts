// Goal: keep `npm run soak` (bench/soak/main.ts) from rotting, and its summary
// honest. Runs it against a real orq for two seconds at a tiny rate with a
// report every half second and checks the JSON it writes: samples with every
// memory and delivery figure, a summary with no failure and no breaker
// transition. No timing assertions: only that the figures exist and are sane.
// The summary's arithmetic is checked on made-up samples.

import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SoakFigures, type SoakSample, soakSummary } from "../../bench/soak/summary.ts";

const REPO_ROOT = join(import.meta.dir, "..", "..");
/** The run takes about 5 s (start, 2 s of load, catch-up, stop); the margin covers a loaded CI machine. */
const RUN_TIMEOUT_MS = 90_000;

describe("npm run soak, tiny", () => {
  test(
    "prints a line per interval and a summary, and writes every figure",
    async () => {
      const outDir = mkdtempSync(join(tmpdir(), "orq-soak-smoke-"));
      const jsonPath = join(outDir, "soak.json");
      try {
        const child = Bun.spawn(
          [process.execPath, join(REPO_ROOT, "bench", "soak", "main.ts"), "--duration-s", "2", "--interval-s", "0.5", "--rate", "500", "--warmup-s", "0.5", "--json", jsonPath],
          { cwd: REPO_ROOT, stdout: "pipe", stderr: "pipe" },
        );
        const [exitCode, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
        expect({ exitCode, stderr: exitCode === 0 ? "" : stderr.slice(-3000) }).toEqual({ exitCode: 0, stderr: "" });
        expect(stdout).toContain("soak summary:");
        expect(stdout).toContain("requests: no errors");
        const report = JSON.parse(readFileSync(jsonPath, "utf8")) as { samples: SoakSample[]; summary: SoakFigures };
        expect(report.samples.length).toBeGreaterThanOrEqual(2);
        expect(stdout.split("\n").filter((line) => line.startsWith("[soak")).length).toBe(report.samples.length);
        for (const sample of report.samples) {
          expect(sample.rssKiB).toBeGreaterThan(0);
          expect(sample.rssAnonKiB).toBeGreaterThan(0);
          expect(sample.rssFileKiB).toBeGreaterThan(0);
          expect(sample.rssAnonKiB + sample.rssFileKiB).toBeLessThanOrEqual(sample.rssKiB + 1);
          expect(sample.deliveredPerS).toBeGreaterThanOrEqual(0);
          expect(sample.rssTroughKiB).toBeGreaterThan(0);
          expect(sample.rssTroughKiB).toBeLessThanOrEqual(sample.rssKiB);
          expect(sample.rssPeakKiB).toBeGreaterThanOrEqual(sample.rssKiB);
          expect(sample.rssAnonTroughKiB).toBeLessThanOrEqual(sample.rssAnonKiB);
          expect(sample.rssAnonPeakKiB).toBeGreaterThanOrEqual(sample.rssAnonKiB);
        }
        expect(report.samples.some((sample) => sample.deliveredPerS > 0 && sample.delayP50Us > 0)).toBe(true);
        expect(report.summary).toMatchObject({ failure: null, breakerTransitions: 0, logErrorLines: 0 });
        expect(report.summary.rssLastKiB).toBeGreaterThan(0);
      } finally {
        rmSync(outDir, { recursive: true, force: true });
      }
    },
    RUN_TIMEOUT_MS,
  );
});

describe("soakSummary", () => {
  const sample = (atS: number, rssKiB: number, delayP99Us: number, troughKiB = rssKiB, peakKiB = rssKiB): SoakSample => ({
    atS,
    rssKiB,
    rssAnonKiB: rssKiB / 2,
    rssFileKiB: rssKiB / 2,
    rssTroughKiB: troughKiB,
    rssPeakKiB: peakKiB,
    rssAnonTroughKiB: troughKiB / 2,
    rssAnonPeakKiB: peakKiB / 2,
    deliveredPerS: 100 * atS,
    enqueuedPerS: 100,
    backlog: 0,
    delayP50Us: 10,
    delayP99Us,
    delayMaxUs: delayP99Us * 2,
  });

  test("leaves the warm-up out, measures growth and the p99 spread, counts the server's warnings", () => {
    const samples = [sample(30, 5000, 900), sample(60, 1000, 300), sample(90, 1050, 100), sample(120, 1100, 200)];
    const log = [
      JSON.stringify({ level: "info", msg: "started" }),
      JSON.stringify({ level: "warn", msg: "storage breaker transition" }),
      JSON.stringify({ level: "warn", msg: "slow storage commits (they succeeded; nothing was refused)" }),
      JSON.stringify({ level: "fatal", msg: "assertion failed" }),
      "not json",
    ].join("\n");
    const { figures, lines } = soakSummary(samples, 30, log, null);
    expect(figures).toMatchObject({
      samples: 4,
      steadySamples: 3,
      rssFirstKiB: 1000,
      rssLastKiB: 1100,
      rssMaxKiB: 1100,
      delayP99UsMin: 100,
      delayP99UsMedian: 200,
      delayP99UsMax: 300,
      delayMaxUs: 1800,
      logWarnLines: 2,
      logErrorLines: 1,
      breakerTransitions: 1,
      slowCommitReports: 1,
      failure: null,
    });
    expect(figures.rssGrowthPct).toBeCloseTo(10, 6);
    expect(figures.deliveredPerSMean).toBeCloseTo(9000, 6);
    expect(lines.at(-1)).toBe("  requests: no errors");
  });

  test("a sawtooth without a trend: the slope and the end medians stay near zero while two single samples move by a quarter", () => {
    // 120 samples 30 s apart: a 7-sample sawtooth 150..210 MiB with no trend, the first steady sample in a trough.
    const kib = (mib: number) => mib * 1024;
    const saw = [150, 160, 170, 180, 190, 200, 210];
    const samples = Array.from({ length: 120 }, (_, i) => sample(30 * (i + 1), kib(saw[(i + 4) % 7] as number), 100));
    const { figures, lines } = soakSummary(samples, 300, "", null);
    expect(figures.steadySamples).toBe(110);
    expect(figures.rssGrowthPct).toBeGreaterThan(10);
    expect(Math.abs(figures.rssSlopePctPerHour)).toBeLessThan(2);
    expect(figures.rssEndStretchSamples).toBe(10);
    expect(Math.abs(figures.rssStretchGrowthPct)).toBeLessThan(10);
    expect(figures.rssP10KiB).toBe(kib(150));
    expect(figures.rssP90KiB).toBe(kib(210));
    expect(lines.some((line) => line.startsWith("  RSS trend after warm-up: slope "))).toBe(true);
  });

  test("a steady climb shows in the slope and in the end medians", () => {
    // +1 MiB a sample, 30 s apart: 120 MiB an hour on a mean near 205 MiB.
    const samples = Array.from({ length: 120 }, (_, i) => sample(30 * (i + 1), (150 + i) * 1024, 100));
    const { figures } = soakSummary(samples, 300, "", null);
    expect(figures.rssSlopePctPerHour).toBeGreaterThan(50);
    // The two end stretches' medians: samples 10-19 and 110-119.
    expect(figures.rssFirstStretchMedianKiB).toBe(164.5 * 1024);
    expect(figures.rssLastStretchMedianKiB).toBe(264.5 * 1024);
  });

  test("troughs and peaks: a sawtooth inside each interval leaves both flat; a leak under it lifts both", () => {
    // Every interval swings 150..230 MiB; the 30-second reading lands anywhere in it.
    const kib = (mib: number) => mib * 1024;
    const phase = [150, 230, 190, 170, 210];
    const flat = Array.from({ length: 120 }, (_, i) => sample(30 * (i + 1), kib(phase[i % 5] as number), 100, kib(150), kib(230)));
    const still = soakSummary(flat, 300, "", null);
    expect(still.figures.troughSlopePctPerHour).toBeCloseTo(0, 6);
    expect(still.figures.peakSlopePctPerHour).toBeCloseTo(0, 6);
    expect(still.figures.troughStretchGrowthPct).toBe(0);
    expect(still.lines.some((line) => line.startsWith("  RSS troughs per interval (lowest of the readings every 500 ms): slope +0.0% per hour"))).toBe(true);
    // The same swing on a floor that rises 0.5 MiB an interval (60 MiB an hour).
    const leak = Array.from({ length: 120 }, (_, i) => sample(30 * (i + 1), kib((phase[i % 5] as number) + i / 2), 100, kib(150 + i / 2), kib(230 + i / 2)));
    const rising = soakSummary(leak, 300, "", null);
    expect(rising.figures.troughSlopePctPerHour).toBeGreaterThan(20);
    expect(rising.figures.peakSlopePctPerHour).toBeGreaterThan(15);
    // Medians of troughs in samples 10-19 and 110-119.
    expect(rising.figures.troughFirstStretchMedianKiB).toBe(kib(150 + 14.5 / 2));
    expect(rising.figures.troughLastStretchMedianKiB).toBe(kib(150 + 114.5 / 2));
  });

  test("a run of two hours is also read per hour: a climb in the first that levels off shows flat in the second", () => {
    // 240 samples 30 s apart, 300 s of warm-up: the floor climbs 0.5 MiB a sample until 2,400 s, then holds.
    const kib = (mib: number) => mib * 1024;
    const floorMiB = (atS: number) => 130 + Math.min(atS, 2400) / 60;
    const samples = Array.from({ length: 240 }, (_, i) => {
      const atS = 30 * (i + 1);
      return sample(atS, kib(floorMiB(atS) + 40), 100, kib(floorMiB(atS)), kib(floorMiB(atS) + 80));
    });
    const { figures, lines } = soakSummary(samples, 300, "", null);
    expect(figures.hours.map((hour) => [hour.fromS, hour.toS, hour.samples])).toEqual([
      [300, 3900, 120],
      [3900, 7200, 110],
    ]);
    const [first, second] = figures.hours;
    expect(first?.troughSlopePctPerHour).toBeGreaterThan(10);
    expect(first?.troughStretchGrowthPct).toBeGreaterThan(10);
    expect(second?.troughSlopePctPerHour).toBeCloseTo(0, 6);
    expect(second?.peakSlopePctPerHour).toBeCloseTo(0, 6);
    expect(second?.peakStretchGrowthPct).toBe(0);
    // The whole run's slope blurs the two: positive, and less than the first hour's.
    expect(figures.troughSlopePctPerHour).toBeGreaterThan(0);
    expect(figures.troughSlopePctPerHour).toBeLessThan(first?.troughSlopePctPerHour ?? 0);
    expect(lines.filter((line) => line.startsWith("  hour "))).toHaveLength(2);
    expect(lines.some((line) => line.startsWith("  hour 2 after warm-up (3900-7200 s, 110 samples): troughs slope +0.0% per hour"))).toBe(true);
  });

  test("an hour's run has one window and prints no per-hour lines; a last window under half an hour is left out", () => {
    const hour = Array.from({ length: 120 }, (_, i) => sample(30 * (i + 1), 1000, 100));
    const one = soakSummary(hour, 300, "", null);
    expect(one.figures.hours).toHaveLength(1);
    expect(one.figures.hours[0]).toMatchObject({ fromS: 300, toS: 3600, samples: 110 });
    expect(one.lines.some((line) => line.startsWith("  hour "))).toBe(false);
    // 300 s of warm-up, then 1 h 20 min: the 20 minutes after the first hour make no window of their own.
    const longer = Array.from({ length: 170 }, (_, i) => sample(30 * (i + 1), 1000, 100));
    expect(soakSummary(longer, 300, "", null).figures.hours.map((h) => h.toS)).toEqual([3900]);
  });

  test("a run shorter than the warm-up uses its second half; a failure is reported", () => {
    const { figures, lines } = soakSummary([sample(1, 100, 5), sample(2, 200, 6)], 300, "", new Error("ack: UNAVAILABLE"));
    expect(figures.steadySamples).toBe(1);
    expect(figures.rssFirstKiB).toBe(200);
    expect(figures.failure).toBe("ack: UNAVAILABLE");
    expect(lines.at(-1)).toBe("  FAILED: ack: UNAVAILABLE");
  });
});
