// orq's CLI with a heap probe, for hunting what grows under a long load
// (BENCHMARKS.md, "What the live heap does under the soak's load"). Run it
// in place of the server through ORQ_BENCH_MAIN, e.g.
//   ORQ_BENCH_MAIN=$PWD/bench/heap-probe-main.ts PROBE_EVERY_S=120 bun scripts/soak.ts --duration-s 2400
// Every PROBE_EVERY_S seconds (default 120; 0 for never): a full collection,
// then one JSON line to PROBE_OUT (default /tmp/heap-probe.jsonl) with the
// collection's ms, bun:jsc heapStats() (live bytes, capacity, cells by
// type, and the memory outside the heap it accounts for), and RssAnon/RssFile
// (processes.ts's readMemory, as the soak reads them). At each
// second listed in PROBE_SNAP_AT (comma-separated; none by default): a full
// collection and a heap snapshot (Bun generateHeapSnapshot) to
// PROBE_SNAP_DIR/snap-<s>.json (default /tmp). A probe's collections and
// snapshots change what RSS the run reads: take its memory figures from the
// probe's lines, not from the soak's.

import { generateHeapSnapshot } from "bun";
import { heapStats } from "bun:jsc";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readMemory } from "./load/processes.ts";

const out = process.env.PROBE_OUT ?? "/tmp/heap-probe.jsonl";
const everyS = Number(process.env.PROBE_EVERY_S ?? 120);
const snapAtS = (process.env.PROBE_SNAP_AT ?? "").split(",").filter((text) => text !== "").map(Number);
const snapDir = process.env.PROBE_SNAP_DIR ?? "/tmp";
const startMs = Date.now();

function probe(): void {
  const gcStartMs = performance.now();
  Bun.gc(true);
  const gcMs = performance.now() - gcStartMs;
  const stats = heapStats();
  const memory = readMemory(process.pid, false);
  const line = {
    s: Math.round((Date.now() - startMs) / 1000),
    gcMs: Math.round(gcMs),
    heapSize: stats.heapSize,
    heapCapacity: stats.heapCapacity,
    extraMemorySize: stats.extraMemorySize,
    objectCount: stats.objectCount,
    rssAnonKiB: memory.rssAnonKiB,
    rssFileKiB: memory.rssFileKiB,
    types: stats.objectTypeCounts,
  };
  appendFileSync(out, `${JSON.stringify(line)}\n`);
}

if (everyS > 0) setInterval(probe, everyS * 1000).unref();
for (const atS of snapAtS) {
  setTimeout(() => {
    Bun.gc(true);
    writeFileSync(join(snapDir, `snap-${atS}.json`), JSON.stringify(generateHeapSnapshot()));
  }, atS * 1000).unref();
}

await import("../src/cli/main.ts");
