// Combines several `bench:load` JSON files (repeats of one configuration, or
// runs of different systems) into medians with their min–max spread, per
// system and figure over the files that hold it: prints the summary and target tables of
// the medians, then the spread of each headline figure, and optionally writes
// the median report. Usage:
//   bun bench/load/combine.ts [--out median.json] run1.json run2.json run3.json

import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { median } from "../support/median.ts";
import type { ResultsBySystem } from "./report.ts";
import { checkTargets, summaryTable, targetTable } from "./report.ts";

/** Figures whose spread is worth printing. */
const HEADLINE = /(itemsPerS|deliveredItemsPerS|p50Us|p99Us|p999Us|rssKiB|rssAnonKiB|rssFileKiB|privateKiB|listeningMs|firstItemMs)$/;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every numeric leaf of `value` as path → number, walked with an explicit stack. */
function flatten(value: Json): Map<string, number> {
  const out = new Map<string, number>();
  const stack: Array<[string, Json]> = [["", value]];
  while (stack.length > 0) {
    const [path, node] = stack.pop() as [string, Json];
    if (typeof node === "number") out.set(path, node);
    else if (node !== null && typeof node === "object") {
      for (const [key, child] of Object.entries(node)) stack.push([path === "" ? key : `${path}.${key}`, child]);
    }
  }
  return out;
}

/** Names enqueue rows by their shape (enqueue.0 → enqueue[batch 1 x 1 conn]) for the spread table. */
function label(path: string, report: Json): string {
  const match = /^(.*\.enqueue)\.(\d+)\.(.*)$/.exec(path);
  if (match === null) return path;
  let node: Json = report;
  for (const key of `${match[1]}.${match[2]}`.split(".")) node = (node as Record<string, Json>)[key] ?? null;
  const row = node as { batch?: number; connections?: number } | null;
  return `${match[1]}[batch ${row?.batch} x ${row?.connections} conn].${match[3]}`;
}

function setPath(root: Json, path: string, value: number): void {
  const keys = path.split(".");
  let node = root as Record<string, Json>;
  for (const key of keys.slice(0, -1)) node = node[key] as Record<string, Json>;
  node[keys[keys.length - 1] ?? ""] = value;
}

const { values: flags, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: "string" } } });
if (positionals.length === 0) throw new Error("usage: bun bench/load/combine.ts [--out FILE] run1.json run2.json ...");
const reports = positionals.map((path) => JSON.parse(readFileSync(path, "utf8")) as { results: Json; [key: string]: Json });
const flats = reports.map((report) => flatten(report.results));
const first = reports[0];
if (first === undefined) throw new Error("no reports");
// Systems may come from different files (say orq runs and peer runs): take each system's shape from the first file holding it.
const medianResults: Json = {};
for (const report of [...reports].reverse()) Object.assign(medianResults, structuredClone(report.results));
const allPaths = new Set<string>();
for (const flat of flats) for (const path of flat.keys()) allPaths.add(path);
const spread: string[] = [];
for (const path of allPaths) {
  const samples = flats.map((flat) => flat.get(path)).filter((v): v is number => v !== undefined);
  const mid = median(samples);
  setPath(medianResults, path, mid);
  if (HEADLINE.test(path)) {
    const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1 });
    spread.push(`| ${label(path, medianResults)} | ${fmt(mid)} | ${fmt(Math.min(...samples))} | ${fmt(Math.max(...samples))} | ${samples.length} |`);
  }
}
const results = medianResults as unknown as ResultsBySystem;
console.log(`Medians over ${reports.length} files (each figure over the files that hold it)\n`);
console.log(summaryTable(results));
console.log("\nTargets (orq / peer), on medians:\n");
const targets = checkTargets(results);
console.log(targetTable(targets));
console.log("\nSpread:\n");
console.log(["| figure | median | min | max | runs |", "|---|---:|---:|---:|---:|", ...spread.sort()].join("\n"));
if (flags.out !== undefined) {
  writeFileSync(flags.out, JSON.stringify({ ...first, results: medianResults, targets, combinedFrom: positionals }, null, 2));
}
