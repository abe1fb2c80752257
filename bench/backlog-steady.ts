// A steady load on top of a large backlog: the state in which the heap
// governor stands aside (src/server/memory-governor.ts). It loads `--items`
// items into one topic and leaves them there, then runs the mixed
// scenario's load (`--rate` items/s offered, strict by default, batches of
// 10, consumers taking up to 100) through another topic for `--duration-s`.
//
// Why: the mixed scenario and the soak carry no backlog, so their heap stays
// under the governor's 128 MiB floor and never shows what the governor's
// blocking collections cost a server that keeps a million items waiting
// (BENCHMARKS.md, "The governor stands aside").
//
// It prints the enqueue-to-delivery delay (p50, p99, p99.9, max, after the
// mixed load's warm-up), the server's RSS (sampled every second through the
// steady phase, and at its end), and the governor's collections from the
// server's debug log (`heap gc` lines): how many in the load and in the
// steady phase, how many at the stand-aside ceiling and how many on the
// small heap's cadence (every 30 s under the floor), the time they blocked,
// and when in the steady phase the last pacing one came (the governor logs
// no line when it stands aside; past that point it stops pacing).
// `ORQ_BENCH_MAIN` runs another build's src/cli/main.ts, for A/B pairs.
//
// Run: ./node_modules/.bin/bun bench/backlog-steady.ts [--items 1000000]
//   [--rate 20000] [--duration-s 90] [--durability strict|relaxed]

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { heapGovernor } from "../src/limits.ts";
import type { CollectReason } from "../src/server/memory-governor.ts";
import { mixedShape, orqMixedTake } from "./load/mixed-load.ts";
import { OrqConn, makeTemplate } from "./load/orq-conn.ts";
import { type Durability, readMemory, sampleMemory, startOrq } from "./load/processes.ts";
import { runMixed } from "./load/runners.ts";
import { NAMESPACE, fixedPayload, orqSystem } from "./load/systems.ts";

const { values } = parseArgs({
  options: {
    items: { type: "string", default: "1000000" },
    rate: { type: "string", default: "20000" },
    "duration-s": { type: "string", default: "90" },
    durability: { type: "string", default: "strict" },
  },
});
const items = Number(values.items);
const rateItemsPerS = Number(values.rate);
const durationS = Number(values["duration-s"]);
const durability = values.durability as Durability;
if (durability !== "strict" && durability !== "relaxed") throw new Error("--durability: strict or relaxed");

/** Enqueue batches of this many items, this many in flight, to fill the backlog fast. */
const loadBatch = 100;
const loadInFlight = 32;
/** How often the server's RSS is read through the steady phase. */
const rssSampleMs = 1_000;
const MiB = 1024 * 1024;

interface HeapGcLine {
  atMs: number;
  reason: CollectReason;
  blockedMs: number;
}

/** The governor's `heap gc` lines among the server's log lines (JSON lines at debug level). */
function heapGcLines(logLines: readonly string[]): HeapGcLine[] {
  const lines: HeapGcLine[] = [];
  for (const text of logLines) {
    if (!text.includes('"heap gc"')) continue;
    const line = JSON.parse(text) as { ts: string; reason?: CollectReason; standing_aside?: boolean; blocked_ms: number };
    // Builds before the cadence (ORQ_BENCH_MAIN) logged standing_aside instead of a reason.
    const reason = line.reason ?? (line.standing_aside === true ? "ceiling" : "growth");
    lines.push({ atMs: Date.parse(line.ts), reason, blockedMs: line.blocked_ms });
  }
  return lines;
}

/** Count, by reason, and the time blocked; with `fromMs`, also when after it the last pacing (`growth`) collection came. */
function summarizeCollections(lines: HeapGcLine[], fromMs: number | null = null): string {
  const blocked = lines.reduce((sum, line) => sum + line.blockedMs, 0);
  const ceiling = lines.filter((line) => line.reason === "ceiling").length;
  const cadence = lines.filter((line) => line.reason === "cadence").length;
  const pacing = lines.filter((line) => line.reason === "growth");
  const lastPacing = fromMs === null ? "" : pacing.length === 0 ? ", none pacing" : `, the last pacing one ${(((pacing[pacing.length - 1] as HeapGcLine).atMs - fromMs) / 1000).toFixed(1)} s in`;
  return `${lines.length} (${ceiling} at the stand-aside ceiling, ${cadence} on the cadence${lastPacing}), blocking ${blocked.toFixed(0)} ms in all`;
}

const dir = mkdtempSync(join(tmpdir(), "orq-backlog-steady-"));
const logPath = join(dir, "orq.log");
// The governor logs its collections at debug level. A flag, not ORQ_LOG_LEVEL set here: Bun.spawn hands the child
// the environment this process started with, so that setting never reached the server and every run before this
// fix counted no collections (BENCHMARKS.md, "The governor stood aside no more").
const child = await startOrq(join(dir, "data"), durability, logPath, ["--log-level", "debug"]);
try {
  const conn = await OrqConn.connect(child.host, child.port);
  const payload = fixedPayload();
  const batch = makeTemplate({ op: "enqueue", ns: NAMESPACE, items: Array.from({ length: loadBatch }, () => ({ topic: "backlog", payload })) });
  const inFlight: Promise<unknown>[] = [];
  for (let sent = 0; sent < items; sent += loadBatch) {
    inFlight.push(conn.callTemplate(batch));
    if (inFlight.length >= loadInFlight) await inFlight.shift();
  }
  await Promise.all(inFlight);
  conn.close();

  const steadyFromMs = Date.now();
  const memory = sampleMemory(child.pid, rssSampleMs);
  const figures = await runMixed(orqSystem(`orq ${durability}`, child.host, child.port), { durationS, rateItemsPerS, ...mixedShape, ...orqMixedTake });
  const rssMaxMiB = memory.stop().rssMaxKiB / 1024;
  const rssAtEndMiB = readMemory(child.pid, false).rssKiB / 1024;

  const logLines = readFileSync(logPath, "utf8").split("\n");
  const gcs = heapGcLines(logLines);
  // The server logs at debug level from its start (the LMDB map's pages dropped after recovery), so none means
  // `--log-level debug` did not take and the counts below would read zero whatever the governor did.
  const debugLines = logLines.filter((text) => text.includes('"level":"debug"')).length;
  console.log(`server log: ${debugLines} debug lines`);
  const ms = (us: number) => (us / 1000).toFixed(1);
  const d = figures.delay;
  console.log(`backlog ${items} items; steady load ${rateItemsPerS}/s offered for ${durationS} s, ${durability}`);
  console.log(`delivered ${figures.deliveredItemsPerS.toFixed(0)}/s; delay p50 ${ms(d.p50Us)} p99 ${ms(d.p99Us)} p99.9 ${ms(d.p999Us)} max ${ms(d.maxUs)} ms`);
  console.log(`RSS through the steady phase: max ${rssMaxMiB.toFixed(0)} MiB, at its end ${rssAtEndMiB.toFixed(0)} MiB`);
  console.log(`governor collections: loading ${summarizeCollections(gcs.filter((line) => line.atMs < steadyFromMs))}`);
  console.log(`governor collections: steady ${summarizeCollections(gcs.filter((line) => line.atMs >= steadyFromMs), steadyFromMs)}`);
  if (gcs.every((line) => line.reason === "cadence")) {
    console.log(`(no pacing collections: the heap stayed under the governor's floor, ${heapGovernor.heapBytesMin / MiB} MiB)`);
  }
} finally {
  await child.stop();
  rmSync(dir, { recursive: true, force: true });
}
