// BENCHMARKS.md's table, made from the JSON of `bun bench/load/main.ts`:
// each scenario's headline figures per system, then each target's ratio.
// A figure is the median over the runs given, with its min–max beside it
// when there are several. When the run has a second priority order (its
// options.priorities, with results labelled "orq strict fifo" and so on, or
// nested under a mode as { fifo: {...} }), each order is a column of its own.
//
//   bun bench/load/page.ts bench/results.json                        # print the table
//   bun bench/load/page.ts bench/results.json --write BENCHMARKS.md  # replace it between the markers
//   bun bench/load/page.ts run1.json run2.json run3.json             # repeats: medians and spread
//
// A file may also hold its repeats itself, as `repeats: [report, ...]`.

import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { median } from "../support/median.ts";
import { FLOOR_PAUSE_MS } from "./latency-ops.ts";
import { checkTargets, type ResultsBySystem } from "./report.ts";
import type { ModeResults } from "./suite.ts";
import { retainedOutcome } from "./waits-cost-bound.ts";

export const BEGIN = "<!-- table:begin -->";
export const END = "<!-- table:end -->";

/** What the page reads of a run's JSON (main.ts writes more). */
export interface LoadReport {
  startedAt?: string;
  finishedAt?: string;
  machine?: { nproc?: number; cpuModel?: string; bun?: string; beanstalkd?: string | null };
  options?: { quick?: boolean; priorities?: string[] | string };
  results: ResultsBySystem;
  skipped?: Record<string, string>;
  failed?: Record<string, string>;
  /** Repeats of one configuration held in one file. */
  repeats?: LoadReport[];
}

/** Priority orders a result label or a nested key may name. */
const ORDERS = ["random", "fifo"];

/** A run's results by priority order (in the run's order, first the one every scenario ran in), then by system. */
export function resultsByOrder(report: LoadReport): Map<string, ResultsBySystem> {
  const listed = report.options?.priorities;
  const named = typeof listed === "string" ? listed.split(",") : (listed ?? []);
  const first = named[0] ?? "";
  const out = new Map<string, ResultsBySystem>([[first, {}]]);
  for (const order of named.slice(1)) out.set(order, {});
  const put = (order: string, system: string, mode: ModeResults) => {
    const bySystem = out.get(order) ?? {};
    bySystem[system] = { ...bySystem[system], ...mode };
    out.set(order, bySystem);
  };
  for (const [label, mode] of Object.entries(report.results)) {
    const suffix = ORDERS.find((order) => order !== first && label.endsWith(` ${order}`));
    const system = suffix === undefined ? label : label.slice(0, -suffix.length - 1);
    const own: Record<string, unknown> = { ...mode };
    for (const order of ORDERS) {
      const nested = own[order];
      if (order === first || nested === null || typeof nested !== "object") continue;
      delete own[order];
      put(order, system, nested as ModeResults);
    }
    put(suffix ?? first, system, own as ModeResults);
  }
  return out;
}

type Pick = (mode: ModeResults) => number | null | undefined;
interface Figure {
  name: string;
  digits: number;
  pick: Pick;
}

const pickOf = (shape: string, which: "p50Us" | "p99Us"): Pick => (m) => m.groupPick?.shapes.find((candidate) => candidate.shape === shape)?.pick[which];
const preferencePickOf = (shape: string, which: "p50Us" | "p99Us"): Pick => (m) => m.preferencePick?.shapes.find((candidate) => candidate.shape === shape)?.pick[which];
const percent = (fraction: number | undefined) => (fraction === undefined ? undefined : fraction * 100);
const enqueueRate = (batch: number, connections: number): Pick => (m) => m.enqueue?.find((r) => r.batch === batch && r.connections === connections)?.itemsPerS;
const p50 = (op: string): Pick => (m) => m.latency?.ops[op]?.p50Us;
const mib = (kib: number | undefined) => (kib === undefined ? undefined : kib / 1024);

/** The page's figures, scenario by scenario. */
export const FIGURES: Figure[] = [
  { name: "enqueue items/s, batch 1, 1 conn", digits: 0, pick: enqueueRate(1, 1) },
  { name: "enqueue items/s, batch 1, 8 conns", digits: 0, pick: enqueueRate(1, 8) },
  { name: "enqueue items/s, batch 100, 1 conn", digits: 0, pick: enqueueRate(100, 1) },
  { name: "enqueue items/s, batch 100, 8 conns", digits: 0, pick: enqueueRate(100, 8) },
  { name: "drain (take 100 + ack) items/s", digits: 0, pick: (m) => m.drain?.itemsPerS },
  { name: "drain: server CPU µs per item", digits: 1, pick: (m) => (m.drain?.serverCpuS === undefined || m.drain.items === 0 ? undefined : (m.drain.serverCpuS * 1e6) / m.drain.items) },
  { name: "drain: pages written per item (until the sweep after it settles)", digits: 3, pick: (m) => (m.drain?.writtenBytes === undefined || m.drain.items === 0 ? undefined : m.drain.writtenBytes / 4096 / m.drain.items) },
  { name: "mixed load: delivered items/s", digits: 0, pick: (m) => m.mixed?.deliveredItemsPerS },
  { name: "mixed load: delay p50 ms", digits: 1, pick: (m) => (m.mixed === undefined ? undefined : m.mixed.delay.p50Us / 1000) },
  { name: "mixed load: delay p99 ms", digits: 1, pick: (m) => (m.mixed === undefined ? undefined : m.mixed.delay.p99Us / 1000) },
  { name: "ping p50 µs", digits: 1, pick: p50("ping") },
  { name: `ping after ${FLOOR_PAUSE_MS} ms idle p50 µs`, digits: 1, pick: p50("ping after pause") },
  { name: "enqueue-1 p50 µs", digits: 1, pick: p50("enqueue1") },
  { name: "dequeue-1 p50 µs", digits: 1, pick: p50("dequeue1") },
  { name: "dequeue-1 + ack p50 µs", digits: 1, pick: p50("dequeue1+ack") },
  { name: "backlog ready, 1 s after the load: RSS MiB", digits: 1, pick: (m) => mib(m.memory?.afterLoad.rssKiB) },
  { name: "backlog ready, 1 s after the load: RssAnon MiB", digits: 1, pick: (m) => mib(m.memory?.afterLoad.rssAnonKiB) },
  { name: "backlog ready, after idle: RSS MiB", digits: 1, pick: (m) => mib(m.memory?.afterIdle?.rssKiB) },
  { name: "drain: peak RSS MiB", digits: 1, pick: (m) => mib(m.drainMemory?.peaks.rssMaxKiB) },
  { name: "restart after stop: ms to the first item", digits: 0, pick: (m) => m.restart?.afterStop.firstItemMs },
  { name: "restart after kill -9: ms to the first item", digits: 0, pick: (m) => m.restart?.afterCrash.firstItemMs },
  { name: "Jupiter: acquisitions/s", digits: 0, pick: (m) => m.jupiter?.acquisitionsPerS },
  { name: "Jupiter: ping/s, same conns and in-flight", digits: 0, pick: (m) => m.jupiter?.pingPerS },
  { name: "Jupiter: acquisitions / ping", digits: 3, pick: (m) => (m.jupiter === undefined ? undefined : m.jupiter.acquisitionsPerS / m.jupiter.pingPerS) },
  { name: "Jupiter floor: acquisitions / ping", digits: 3, pick: (m) => m.jupiter?.floor?.ratio },
  { name: "locality: acquisitions/s with prefers (10 kinds, 10 repositories, prefer_wait_ms 50)", digits: 0, pick: (m) => m.locality?.prefers.acquisitionsPerS },
  { name: "locality: acquisitions/s, the same stream without prefers", digits: 0, pick: (m) => m.locality?.plain.acquisitionsPerS },
  { name: "locality: % of deliveries to a worker holding the item's repository", digits: 1, pick: (m) => percent(m.locality?.prefers.fullFitShare) },
  { name: "locality: the same % without prefers (an assignment that ignores repositories)", digits: 1, pick: (m) => percent(m.locality?.plain.fullFitShare) },
  { name: "noisy neighbour: small groups' delay p99 ms, without the flood", digits: 1, pick: (m) => (m.noisy === undefined ? undefined : m.noisy.alone.p99Us / 1000) },
  { name: "noisy neighbour: small groups' delay p99 ms, during the flood", digits: 1, pick: (m) => (m.noisy === undefined ? undefined : m.noisy.flood.p99Us / 1000) },
  { name: "noisy neighbour: s from the flood's first enqueue to its last delivery", digits: 1, pick: (m) => m.noisy?.floodS },
  { name: "capped drain (1,000 groups, \"*\" max_leased 8) items/s", digits: 0, pick: (m) => m.cappedDrain?.capped.drain.itemsPerS },
  { name: "capped drain: the plain drain beside it, items/s", digits: 0, pick: (m) => m.cappedDrain?.plain.drain.itemsPerS },
  { name: "group pick p50 µs, items spread over groups (100 each)", digits: 2, pick: pickOf("spread", "p50Us") },
  { name: "group pick p99 µs, items spread over groups (100 each)", digits: 2, pick: pickOf("spread", "p99Us") },
  { name: "group pick p50 µs, groups of one item", digits: 2, pick: pickOf("one each", "p50Us") },
  { name: "group pick p99 µs, groups of one item", digits: 2, pick: pickOf("one each", "p99Us") },
  { name: "memory per group beyond its item, bytes", digits: 1, pick: (m) => m.groupPick?.memory?.perGroupBytes },
  { name: "preference pick p50 µs, fit order (prefer_wait_ms 0)", digits: 2, pick: preferencePickOf("fit order", "p50Us") },
  { name: "preference pick p99 µs, fit order (prefer_wait_ms 0)", digits: 2, pick: preferencePickOf("fit order", "p99Us") },
  { name: "preference pick p50 µs, held (every item in its wait)", digits: 2, pick: preferencePickOf("held", "p50Us") },
  { name: "preference pick p99 µs, held (every item in its wait)", digits: 2, pick: preferencePickOf("held", "p99Us") },
  { name: "parked waits held at once (one live item each, over 100 connections)", digits: 0, pick: (m) => m.waitsCost?.waits.parked },
  { name: "memory per parked wait, bytes", digits: 1, pick: (m) => m.waitsCost?.waits.perWaitBytes },
  { name: "wake: ms from the first ack to the last wait answered", digits: 1, pick: (m) => m.waitsCost?.waits.wakeMs },
  { name: "wake: µs per wait beyond its ack", digits: 2, pick: (m) => m.waitsCost?.waits.wakeUsPerWait },
  { name: "memory per retained acked outcome without a result, bytes", digits: 1, pick: (m) => retainedOutcome(m.waitsCost, 0)?.perOutcomeBytes },
  { name: "memory per retained acked outcome with a 100 B result, bytes beyond the result", digits: 1, pick: (m) => retainedOutcome(m.waitsCost, 100)?.perOutcomeBeyondResultBytes },
  { name: "memory per retained acked outcome with a 1 KiB result, bytes beyond the result", digits: 1, pick: (m) => retainedOutcome(m.waitsCost, 1024)?.perOutcomeBeyondResultBytes },
  { name: "memory a 100 B result adds to an acked outcome, bytes beyond its own", digits: 1, pick: (m) => retainedOutcome(m.waitsCost, 100)?.perResultBeyondBytes },
];

const dash = "—";
const num = (n: number, digits: number) => n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The median of `values`, with "(min–max)" when they differ; a dash for none. */
export function spread(values: number[], digits: number, unit = ""): string {
  if (values.length === 0) return dash;
  const low = Math.min(...values);
  const high = Math.max(...values);
  const mid = `${num(median(values), digits)}${unit}`;
  return low === high ? mid : `${mid} (${num(low, digits)}–${num(high, digits)}${unit})`;
}

/** Every run the reports hold: a report's own repeats, or the report itself. */
function runsOf(reports: LoadReport[]): LoadReport[] {
  return reports.flatMap((report) => (report.repeats?.length ? report.repeats.map((run) => ({ ...run, options: run.options ?? report.options })) : [report]));
}

const orderHeader = (order: string) => (order === "" ? "as run" : order);

/** The table of figures: one row per figure and system, one column per priority order. */
function figureTable(runs: Array<Map<string, ResultsBySystem>>, orders: string[]): string {
  const systems: string[] = [];
  for (const run of runs) for (const bySystem of run.values()) for (const system of Object.keys(bySystem)) if (!systems.includes(system)) systems.push(system);
  const unnamed = runs.length === 1 ? "value" : "median (min–max)";
  const columns = orders.length === 1 && orders[0] === "" ? [unnamed] : orders.map(orderHeader);
  const lines = [`| figure | system | ${columns.join(" | ")} |`, `|---|---|${orders.map(() => "---:").join("|")}|`];
  for (const figure of FIGURES) {
    let first = true;
    for (const system of systems) {
      const cells = orders.map((order) => {
        const values: number[] = [];
        for (const run of runs) {
          const mode = run.get(order)?.[system];
          const value = mode === undefined ? undefined : figure.pick(mode);
          if (typeof value === "number" && Number.isFinite(value)) values.push(value);
        }
        return spread(values, figure.digits);
      });
      if (cells.every((cell) => cell === dash)) continue;
      lines.push(`| ${first ? figure.name : ""} | ${system} | ${cells.join(" | ")} |`);
      first = false;
    }
  }
  return lines.join("\n");
}

/**
 * The table of targets: each target's ratio (median, min–max) and whether it
 * is met, per priority order. The first order's targets are read from each
 * run's whole results, so a target across orders (random against FIFO) is
 * measured there.
 */
function targetTable(runs: Array<Map<string, ResultsBySystem>>, orders: string[], whole: ResultsBySystem[]): string {
  const checks = orders.map((order, o) => runs.map((run, r) => checkTargets(o === 0 ? (whole[r] ?? {}) : (run.get(order) ?? {}))));
  const names = (checks[0]?.[0] ?? []).map((check) => check.name);
  const single = orders.length === 1;
  const header = orders.flatMap((order) => (single ? ["ratio", "status"] : [`ratio, ${orderHeader(order)}`, `status, ${orderHeader(order)}`]));
  const lines = [`| target | bound | ${header.join(" | ")} |`, `|---|---:|${orders.map(() => "---:|---").join("|")}|`];
  names.forEach((name, index) => {
    const any = checks[0]?.[0]?.[index];
    if (any === undefined) return;
    const bound = `${any.kind === "atLeast" ? "≥" : "≤"} ${any.bound}x`;
    const cells = checks.flatMap((byRun) => {
      const measured = byRun.map((targets) => targets[index]).filter((check) => check !== undefined && check.ratio !== null);
      const ratios = measured.map((check) => check?.ratio as number);
      if (ratios.length === 0) return [dash, "not measured"];
      const mid = median(ratios);
      const met = any.kind === "atLeast" ? mid >= any.bound : mid <= any.bound;
      const metRuns = measured.filter((check) => check?.status === "met").length;
      const status = `${met ? "met" : "missed"}${ratios.length > 1 ? ` (${metRuns} of ${ratios.length} runs met)` : ""}`;
      return [spread(ratios, Math.min(...ratios) < 1 ? 3 : 2, "x"), status];
    });
    lines.push(`| ${name} | ${bound} | ${cells.join(" | ")} |`);
  });
  return lines.join("\n");
}

/** The markdown that goes between the markers: a line on the runs, the figures, the targets. */
export function pageTables(reports: LoadReport[], source: string): string {
  const runs = runsOf(reports);
  const split = runs.map(resultsByOrder);
  const orders: string[] = [];
  for (const run of split) for (const order of run.keys()) if (!orders.includes(order)) orders.push(order);
  const first = runs[0];
  const machine = first?.machine;
  const when = first?.startedAt === undefined ? "" : ` started ${first.startedAt.slice(0, 16).replace("T", " ")} UTC`;
  const on = machine === undefined ? "" : ` on ${machine.cpuModel}, ${machine.nproc} vCPU, Bun ${machine.bun}${machine.beanstalkd ? `, ${machine.beanstalkd}` : ""}`;
  const count = runs.length === 1 ? "one run" : `${runs.length} runs (each figure the median, min–max in brackets)`;
  const notes: string[] = [];
  if (runs.some((run) => run.options?.quick === true)) notes.push("QUICK sizes: these figures mean nothing.");
  for (const run of runs) {
    for (const [name, reason] of Object.entries(run.skipped ?? {})) notes.push(`${name} skipped: ${reason}.`);
    for (const [name, reason] of Object.entries(run.failed ?? {})) notes.push(`${name} failed: ${reason.split("\n")[0]}.`);
  }
  return [
    `Made by \`bun bench/load/page.ts ${source}\` from ${count}${when}${on}.${notes.length === 0 ? "" : ` ${[...new Set(notes)].join(" ")}`}`,
    "",
    figureTable(split, orders),
    "",
    targetTable(split, orders, runs.map((run) => run.results ?? {})),
  ].join("\n");
}

/** `markdown` with the text between the markers replaced by `block`. */
export function replaceTable(markdown: string, block: string): string {
  const begin = markdown.indexOf(BEGIN);
  const end = markdown.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`the file has no ${BEGIN} ... ${END} markers`);
  return `${markdown.slice(0, begin + BEGIN.length)}\n${block}\n${markdown.slice(end)}`;
}

function main(argv: string[]): number {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { write: { type: "string" } } });
  if (positionals.length === 0) {
    console.error("usage: bun bench/load/page.ts RESULT.json [MORE.json ...] [--write BENCHMARKS.md]");
    return 2;
  }
  const reports = positionals.map((path) => JSON.parse(readFileSync(path, "utf8")) as LoadReport);
  const block = pageTables(reports, positionals.join(" "));
  if (values.write === undefined) {
    console.log(block);
    return 0;
  }
  try {
    writeFileSync(values.write, replaceTable(readFileSync(values.write, "utf8"), block));
  } catch (error) {
    console.error(`page: ${values.write}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  console.log(`${values.write}: table replaced`);
  return 0;
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2));
