// BENCHMARKS.md's table of cluster mode beside the PostgreSQL queues, made
// from the JSON of `npm run bench:pg-compare`: one row per system and
// configuration with its four rates and its WAL per item, then issue 54's
// targets, each a ratio measured within the one run. Its first line says how
// the run was made, the warm-up before each pair included.
//
//   bun bench/cluster/compare-page.ts bench/results-pg-compare.json                        # print it
//   bun bench/cluster/compare-page.ts bench/results-pg-compare.json --write BENCHMARKS.md  # replace it between the markers

import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { CompareReport } from "./compare-report.ts";
import type { PairResult, ShapePair } from "./compare-shapes.ts";

export const BEGIN = "<!-- pg-compare:begin -->";
export const END = "<!-- pg-compare:end -->";

const dash = "—";
const num = (n: number, digits = 0) => n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

type Rows = CompareReport["results"];

function cell(result: PairResult | undefined, pick: (r: PairResult) => number, suffix = ""): string {
  return result === undefined ? dash : `${num(pick(result))}${suffix}`;
}

function rateTable(results: Rows): string {
  const lines = [
    "| system | enqueue, batch 100 | drain, batched | enqueue, one at a time | drain, one at a time | WAL bytes per item, batched | WAL bytes per item, one at a time |",
    "|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const [label, pairs] of Object.entries(results)) {
    const { batched, single } = pairs;
    const cells = [
      cell(batched, (r) => r.enqueuePerS, "/s"),
      cell(batched, (r) => r.drainPerS, "/s"),
      cell(single, (r) => r.enqueuePerS, "/s"),
      cell(single, (r) => r.drainPerS, "/s"),
      cell(batched, (r) => r.walBytesPerItem),
      cell(single, (r) => r.walBytesPerItem),
    ];
    lines.push(`| ${label} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

type Figure = "enqueuePerS" | "drainPerS";

/** The best of the rows whose label starts with one of `prefixes`, for one pair and figure. */
function best(results: Rows, prefixes: string[], pair: ShapePair, figure: Figure): number | null {
  let top: number | null = null;
  for (const [label, pairs] of Object.entries(results)) {
    const value = pairs[pair]?.[figure];
    if (!prefixes.some((prefix) => label.startsWith(prefix)) || value === undefined) continue;
    top = top === null ? value : Math.max(top, value);
  }
  return top;
}

function exact(results: Rows, label: string, pair: ShapePair, figure: Figure): number | null {
  return results[label]?.[pair]?.[figure] ?? null;
}

interface Target {
  name: string;
  bound: number;
  ratio: (results: Rows) => number | null;
}

const LIBRARIES = ["pg-boss", "graphile-worker"];
const ONE_NODE = "orq, 1 node";
const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : a / b);

/** Issue 54's targets, orq with one node in FIFO order (as the libraries run) against the libraries. */
const TARGETS: Target[] = [
  { name: "enqueue, batch 100, vs the better library", bound: 1.5, ratio: (r) => ratio(exact(r, ONE_NODE, "batched", "enqueuePerS"), best(r, LIBRARIES, "batched", "enqueuePerS")) },
  { name: "drain, batched, vs graphile-worker", bound: 1, ratio: (r) => ratio(exact(r, ONE_NODE, "batched", "drainPerS"), best(r, ["graphile-worker"], "batched", "drainPerS")) },
  { name: "drain, batched, vs pg-boss", bound: 3, ratio: (r) => ratio(exact(r, ONE_NODE, "batched", "drainPerS"), best(r, ["pg-boss"], "batched", "drainPerS")) },
  { name: "enqueue, one at a time, vs the better library", bound: 3, ratio: (r) => ratio(exact(r, ONE_NODE, "single", "enqueuePerS"), best(r, LIBRARIES, "single", "enqueuePerS")) },
  { name: "drain, one at a time, vs the better library", bound: 3, ratio: (r) => ratio(exact(r, ONE_NODE, "single", "drainPerS"), best(r, LIBRARIES, "single", "drainPerS")) },
  { name: "3 nodes vs 1 node, enqueue, batch 100", bound: 0.8, ratio: (r) => ratio(exact(r, "orq, 3 nodes", "batched", "enqueuePerS"), exact(r, ONE_NODE, "batched", "enqueuePerS")) },
  { name: "3 nodes vs 1 node, drain, batched", bound: 0.8, ratio: (r) => ratio(exact(r, "orq, 3 nodes", "batched", "drainPerS"), exact(r, ONE_NODE, "batched", "drainPerS")) },
];

function targetTable(results: Rows): string {
  const lines = ["| target (orq, 1 node unless named) | bound | ratio | status |", "|---|---:|---:|---|"];
  for (const target of TARGETS) {
    const value = target.ratio(results);
    const shown = value === null ? [dash, "not measured"] : [`${num(value, 2)}x`, value >= target.bound ? "met" : "missed"];
    lines.push(`| ${target.name} | ≥ ${target.bound}x | ${shown.join(" | ")} |`);
  }
  return lines.join("\n");
}

/** A run's processed counts that are not every item exactly once, as notes. */
function countNotes(results: Rows): string[] {
  const notes: string[] = [];
  for (const [label, pairs] of Object.entries(results)) {
    for (const [pair, r] of Object.entries(pairs)) {
      if (r.distinct !== r.items || r.duplicates > 0) notes.push(`${label}, ${pair}: ${r.distinct} of ${r.items} items processed, ${r.duplicates} more than once.`);
    }
  }
  return notes;
}

/** The markdown that goes between the markers. */
export function comparePage(report: CompareReport, source: string): string {
  const m = report.machine;
  const when = report.startedAt.slice(0, 16).replace("T", " ");
  const pg = report.postgres;
  const settings = `PostgreSQL ${pg["server_version"] ?? "?"} (fsync ${pg["fsync"] ?? "?"}, synchronous_commit ${pg["synchronous_commit"] ?? "?"}, full_page_writes ${pg["full_page_writes"] ?? "?"})`;
  const warmupItems = report.options.warmupItems ?? 0;
  const mostNodes = Math.max(1, ...report.options.nodes);
  const warmUp =
    warmupItems === 0
      ? "no warm-up before the timed run"
      : report.options.warmupPerProcess === true
        ? `each after a warm-up of ${num(warmupItems)} items per serving process (each orq node, so ${num(warmupItems * mostNodes)} before a ${mostNodes}-node pair) in the same shape on the same database and nodes, not counted (decisions/043)`
        : `each after a warm-up of ${num(warmupItems)} items in the same shape on the same database and nodes, not counted (decisions/043)`;
  const notes = [...countNotes(report.results), ...Object.entries(report.failed).map(([name, reason]) => `${name} failed: ${reason.split("\n")[0]}.`)];
  return [
    `Made by \`bun bench/cluster/compare-page.ts ${source}\` from one run started ${when} UTC on ${m.cpuModel}, ${m.nproc} vCPU, Bun ${m.bun}, ${settings}: ` +
      `${num(report.options.items)} items per pair, ${warmUp}.${notes.length === 0 ? "" : ` ${notes.join(" ")}`}`,
    "",
    rateTable(report.results),
    "",
    targetTable(report.results),
  ].join("\n");
}

/** `markdown` with the text between the markers replaced by `block`. */
export function replaceBetweenMarkers(markdown: string, block: string): string {
  const begin = markdown.indexOf(BEGIN);
  const end = markdown.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`the file has no ${BEGIN} ... ${END} markers`);
  return `${markdown.slice(0, begin + BEGIN.length)}\n${block}\n${markdown.slice(end)}`;
}

function main(argv: string[]): number {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { write: { type: "string" } } });
  if (positionals.length !== 1) {
    console.error("usage: bun bench/cluster/compare-page.ts RESULT.json [--write BENCHMARKS.md]");
    return 2;
  }
  const source = positionals[0]!;
  const block = comparePage(JSON.parse(readFileSync(source, "utf8")) as CompareReport, source);
  if (values.write === undefined) {
    console.log(block);
    return 0;
  }
  writeFileSync(values.write, replaceBetweenMarkers(readFileSync(values.write, "utf8"), block));
  console.log(`${values.write}: comparison table replaced`);
  return 0;
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2));
