#!/usr/bin/env bun
// `npm run soak`: steady mixed load against a real orq for a long time, to
// show whether memory and tail latency stay flat. Starts orq as a child
// process on free ports (data in a temp dir, strict durability by default),
// offers 20,000 items/s (enqueue, then dequeue + ack, nothing accumulating)
// with bench:load's mixed-load driver (bench/load/mixed-load.ts), and every
// 30 s prints the server's RSS (anonymous and file-backed, from
// /proc/PID/status), delivered items/s and the enqueue-to-delivery delay
// percentiles of that interval. Ends with a summary: RSS growth after the
// warm-up, the spread of the interval p99s, and the server's warn/error log
// lines, and what the LMDB file holds (sub-databases' pages, the acked log's
// among them). Exits 1 if any request failed (no request should, on a healthy
// disk).
//
// Every sample and the summary go to .bench-out/soak-<timestamp>.json
// (gitignored) or --json PATH.
//
//   npm run soak                                  # one hour
//   npm run soak -- --duration-s 600 --rate 20000 --interval-s 30 --json soak.json

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { newHistogram, summarize } from "../load/histogram.ts";
import { MixedLoad, mixedShape, orqMixedTake } from "../load/mixed-load.ts";
import { readMemory, sampleMemory, startOrq, type Durability } from "../load/processes.ts";
import { orqSystem } from "../load/systems.ts";
import { dbStatsLines } from "./db-stats.ts";
import { soakSummary, type SoakSample } from "./summary.ts";

const REPO_ROOT = join(import.meta.dir, "..", "..");
/** How long the consumers may take to catch up after the producers stop (10 s). */
const tailMs = 10_000;
/** RSS read between report lines for each interval's trough and peak (500 ms; the sawtooth's period is seconds). */
const rssReadEveryMs = 500;

const HELP = `bun bench/soak/main.ts [flags]
  --duration-s S    how long to offer load (default 3600)
  --rate N          offered items/s (default 20000)
  --interval-s S    seconds between report lines (default 30)
  --warmup-s S      seconds of warm-up left out of the flatness figures (default 300)
  --durability M    strict or relaxed (default strict)
  --json PATH       where to write every sample and the summary as JSON
                    (default .bench-out/soak-<timestamp>.json)
  --keep            keep the temp data dir and server log`;

function positive(text: string | undefined, fallback: number, flag: string): number {
  if (text === undefined) return fallback;
  const value = Number(text.replaceAll("_", ""));
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${flag}: expected a positive number, got "${text}"`);
  return value;
}

function parse(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      "duration-s": { type: "string" },
      rate: { type: "string" },
      "interval-s": { type: "string" },
      "warmup-s": { type: "string" },
      durability: { type: "string" },
      json: { type: "string" },
      keep: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help === true) return null;
  const durability = values.durability ?? "strict";
  if (durability !== "strict" && durability !== "relaxed") throw new Error(`--durability: strict or relaxed, got "${durability}"`);
  return {
    durationS: positive(values["duration-s"], 3600, "--duration-s"),
    rateItemsPerS: positive(values.rate, 20_000, "--rate"),
    intervalS: positive(values["interval-s"], 30, "--interval-s"),
    warmupS: positive(values["warmup-s"], 300, "--warmup-s"),
    durability: durability as Durability,
    json: values.json ?? join(REPO_ROOT, ".bench-out", `soak-${new Date().toISOString().replaceAll(":", "-")}.json`),
    keep: values.keep === true,
  };
}

const mib = (kib: number) => (kib / 1024).toFixed(1);
const ms = (us: number) => (us / 1000).toFixed(2);

async function main(): Promise<number> {
  const options = parse(process.argv.slice(2));
  if (options === null) {
    console.log(HELP);
    return 0;
  }
  const tempDir = mkdtempSync(join(tmpdir(), "orq-soak-"));
  const logPath = join(tempDir, "orq.log");
  const child = await startOrq(join(tempDir, "data"), options.durability, logPath);
  console.log(
    `soak: orq ${options.durability} pid ${child.pid} on ${child.host}:${child.port}; ${options.rateItemsPerS} items/s offered for ${options.durationS} s, ` +
      `a line every ${options.intervalS} s (data and log in ${tempDir})`,
  );
  const samples: SoakSample[] = [];
  let window = newHistogram();
  let failure: Error | null = null;
  // Each interval's RSS trough and peak: one sampler per interval, restarted at each report line.
  let rssRange = sampleMemory(child.pid, rssReadEveryMs);
  try {
    const load = await MixedLoad.open(orqSystem("orq", child.host, child.port), { rateItemsPerS: options.rateItemsPerS, ...mixedShape, ...orqMixedTake }, (delayMs) => {
      window.recordValue(Math.max(1, Math.round(delayMs * 1e6)));
    });
    const startMs = performance.now();
    const endMs = startMs + options.durationS * 1000;
    let lastMs = startMs;
    let lastDelivered = 0;
    let lastEnqueued = 0;
    const report = () => {
      const nowMs = performance.now();
      const seconds = (nowMs - lastMs) / 1000;
      const delay = summarize(window);
      window = newHistogram();
      const memory = readMemory(child.pid);
      const range = rssRange.stop();
      rssRange = sampleMemory(child.pid, rssReadEveryMs);
      const sample: SoakSample = {
        atS: Math.round((nowMs - startMs) / 100) / 10,
        rssKiB: memory.rssKiB,
        rssAnonKiB: memory.rssAnonKiB,
        rssFileKiB: memory.rssFileKiB,
        // Folded with this line's own reading, taken a moment earlier, so trough <= reading <= peak.
        rssTroughKiB: Math.min(range.rssMinKiB, memory.rssKiB),
        rssPeakKiB: Math.max(range.rssMaxKiB, memory.rssKiB),
        rssAnonTroughKiB: Math.min(range.rssAnonMinKiB, memory.rssAnonKiB),
        rssAnonPeakKiB: Math.max(range.rssAnonMaxKiB, memory.rssAnonKiB),
        deliveredPerS: (load.delivered - lastDelivered) / seconds,
        enqueuedPerS: (load.enqueued - lastEnqueued) / seconds,
        backlog: load.enqueued - load.received,
        delayP50Us: delay.p50Us,
        delayP99Us: delay.p99Us,
        delayMaxUs: delay.maxUs,
      };
      samples.push(sample);
      lastMs = nowMs;
      lastDelivered = load.delivered;
      lastEnqueued = load.enqueued;
      console.log(
        `[soak ${sample.atS.toFixed(options.intervalS < 1 ? 1 : 0).padStart(5)} s] RSS ${mib(sample.rssKiB)} MiB (anon ${mib(sample.rssAnonKiB)}, file ${mib(sample.rssFileKiB)}; ` +
          `interval ${mib(sample.rssTroughKiB)}-${mib(sample.rssPeakKiB)}) | ` +
          `delivered ${Math.round(sample.deliveredPerS)}/s, enqueued ${Math.round(sample.enqueuedPerS)}/s, backlog ${sample.backlog} | ` +
          `delay p50 ${ms(sample.delayP50Us)} ms, p99 ${ms(sample.delayP99Us)} ms, max ${ms(sample.delayMaxUs)} ms`,
      );
    };
    const ticker = setInterval(report, options.intervalS * 1000);
    load.startConsuming();
    await load.produce(startMs, endMs);
    clearInterval(ticker);
    if (performance.now() - lastMs >= (options.intervalS * 1000) / 2 || samples.length === 0) report();
    await load.stop(tailMs).catch((error: Error) => {
      failure = error;
    });
  } finally {
    rssRange.stop();
    const exitCode = await child.stop();
    if (exitCode !== 0) failure ??= new Error(`orq exited with ${exitCode} at the end of the soak`);
  }
  const log = readFileSync(logPath, "utf8");
  const summary = soakSummary(samples, options.warmupS, log, failure);
  for (const line of summary.lines) console.log(line);
  // Where the file-backed pages come from: the acked log, items, or free pages (db-stats.ts).
  console.log("LMDB file after the soak:");
  for (const line of dbStatsLines(join(tempDir, "data"))) console.log(line);
  const jsonPath = resolve(options.json);
  mkdirSync(dirname(jsonPath), { recursive: true });
  writeFileSync(jsonPath, JSON.stringify({ options, samples, summary: summary.figures }, null, 2));
  console.log(`JSON: ${jsonPath}`);
  if (!options.keep) rmSync(tempDir, { recursive: true, force: true });
  return failure === null ? 0 : 1;
}

process.exitCode = await main();
