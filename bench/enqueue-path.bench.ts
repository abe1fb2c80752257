// The server's own time and JS-heap allocations per enqueued item (issue 10's
// memory scenario: the enqueue path's garbage is what the server's anonymous
// memory holds 1 s after a load), in one process and without sockets: real
// enqueue frames go through the Dispatcher (decode, checks, op, engine, LMDB
// store with its group commit, strict by default) and the replies (ids)
// through the FrameEncoder, as a connection would send them. Each round
// sends `requests` enqueue frames of `batch` items (100-byte payloads, one
// topic, default settings) and waits for their commit. Printed: min / median
// µs per item over the rounds (main thread, LMDB's writer thread aside);
// then, from more rounds metered by support/allocation-count.ts, JS-heap
// cells and bytes per enqueued item and per request, commit included. Cells
// are exact and repeat run to run; bytes are within a few per cent (block
// granularity). Payload bytes the store copies off-heap are not counted.
// Expect (2-core shared machine, strict): batch 100 min 4.1-5.0 µs per item,
// 15.3 cells (1.5-1.6 KB) per item; batch 1 min 9-19 µs, 54.1 cells (3.5 KB)
// (BENCHMARKS.md, "(2026-12-02, allocations per enqueued item)").
// Run: ./node_modules/.bin/bun bench/enqueue-path.bench.ts [batch] [relaxed|strict] [items]
// (default 100 strict 300000). ORQ_BENCH_ALLOCATION_TYPES=1 adds the cells
// per request by type; ORQ_BENCH_SPLIT_COMMIT=1 charges the commit and replies apart.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Encoder } from "@msgpack/msgpack";
import { AllocationMeter, AllocationTotals, cellsByType } from "./support/allocation-count.ts";
import { Engine } from "../src/engine/engine.ts";
import { ManualClock } from "../src/lib/clock.ts";
import { defaultLimits } from "../src/limits.ts";
import { FrameEncoder } from "../src/protocol/frame-encoder.ts";
import type { WireError } from "../src/protocol/wire-types.ts";
import { allNamespaces, TokenTable } from "../src/server/auth.ts";
import { Dispatcher, type RequestSource } from "../src/server/dispatcher.ts";
import { silentLogger } from "../src/server/logger.ts";
import type { Session } from "../src/server/op-types.ts";
import { GroupCommitter } from "../src/storage/group-commit.ts";
import { openLmdbStore } from "../src/storage/lmdb/lmdb-store.ts";
import type { Durability } from "../src/storage/store.ts";

const batch = Number(process.argv[2] ?? 100);
const durability = (process.argv[3] ?? "strict") as Durability;
const items = Number(process.argv[4] ?? 300_000);
/** Requests per round: 8 connections' worth of batches in flight, as in bench/load's memory scenario. */
const requests = Math.max(8, Math.floor(800 / batch));

/** Collects the encoded frames, as a Connection would queue them. */
class Sink implements RequestSource {
  readonly session: Session = { connectionId: 1, scope: allNamespaces, readOnly: false };
  readonly frames = new FrameEncoder();
  replies = 0;
  bytes = 0;
  send(reply: Record<string, unknown>): void {
    if (reply.ids === undefined) throw new Error(`enqueue failed: ${JSON.stringify(reply)}`);
    this.bytes += this.frames.encode(reply).length;
    this.replies++;
  }
  fail(error: WireError): void {
    throw new Error(`connection failed: ${error.code} ${error.message}`);
  }
  requestStarted(): void {}
  requestFinished(): void {}
}

const dataDir = mkdtempSync(join(tmpdir(), "orq-enq-"));
const store = await openLmdbStore({ dataDir, shards: 16, durability });
const clock = new ManualClock(1_700_000_000_000);
const writer = new GroupCommitter(store, { clock });
const limits = { ...defaultLimits, liveItemsMax: Math.max(defaultLimits.liveItemsMax, items * 2) };
const engine = Engine.recover({ store, writer, limits, namespaces: {}, nowMs: clock.nowMs() });
const dispatcher = new Dispatcher({
  engine,
  limits,
  clock,
  tokens: new TokenTable([]),
  serverInfo: { version: "bench", nodeId: "bench", shards: 16 },
  logger: silentLogger,
  serverStats: () => ({}),
  fatal: (error) => {
    throw error;
  },
});

const encoder = new Encoder();
const payload = new Uint8Array(100).fill(7);
const body = encoder.encode({
  id: 1,
  op: "enqueue",
  ns: "bench",
  items: Array.from({ length: batch }, (_, i) => ({ topic: "load", priority: i % 3, payload })),
});
const sink = new Sink();

/** One round: `requests` frames, then the wait for their commit (the replies are sent when it lands). */
async function round(afterRequests?: () => void): Promise<void> {
  sink.replies = 0;
  for (let r = 0; r < requests; r++) dispatcher.handleFrame(sink, body);
  afterRequests?.();
  await writer.drain();
  await Promise.resolve();
  await Promise.resolve();
}

const perRound = requests * batch;
const allocationRounds = 24;
const timedRounds: number[] = [];
let enqueued = 0;
while (enqueued < items - perRound * allocationRounds) {
  const startMs = performance.now();
  await round();
  timedRounds.push(((performance.now() - startMs) * 1000) / perRound);
  if (sink.replies !== requests) throw new Error(`${sink.replies} of ${requests} replies`);
  enqueued += perRound;
}

const meter = new AllocationMeter();
const allocations = new AllocationTotals();
/** ORQ_BENCH_SPLIT_COMMIT=1: the requests (decode, op, engine) charged to `allocations`, the commit with the replies to `commitAllocations`. */
const splitCommit = process.env.ORQ_BENCH_SPLIT_COMMIT === "1";
const commitAllocations = new AllocationTotals();
const warmUpRounds = 2;
let sinceCollection = 0;
meter.collect();
for (let r = 0; r < allocationRounds; r++) {
  const charged = sinceCollection >= warmUpRounds;
  meter.mark(null);
  await round(splitCommit ? () => meter.mark(charged ? allocations : null, requests) : undefined);
  meter.mark(charged ? (splitCommit ? commitAllocations : allocations) : null, requests);
  if (sink.replies !== requests) throw new Error(`${sink.replies} of ${requests} replies`);
  enqueued += perRound;
  if (meter.endRound()) {
    sinceCollection++;
  } else {
    meter.collect();
    sinceCollection = 0;
  }
}

const sorted = [...timedRounds].sort((a, b) => a - b);
const perItem = (n: number) => (allocations.requests === 0 ? "-" : (n / (allocations.requests * batch)).toFixed(batch === 1 ? 1 : 2));
console.log(
  `${durability}, batch ${batch}: ${enqueued} items; µs per item, min / median of rounds of ${requests} requests: ` +
    `${(sorted[0] as number).toFixed(2)} / ${(sorted[Math.floor(sorted.length / 2)] as number).toFixed(2)}`,
);
console.log(
  `  allocated on the JS heap (${allocations.requests / requests} of ${allocationRounds} rounds charged): ` +
    `per item ${perItem(allocations.bytes)} bytes, ${perItem(allocations.cells)} cells; per request ${allocations.describe()}`,
);
if (process.env.ORQ_BENCH_ALLOCATION_TYPES === "1") {
  console.log(`  cells per request by type${splitCommit ? " (requests only)" : ""}:`, cellsByType([allocations], allocations.requests));
  if (splitCommit) console.log(`  commit and replies: per request ${commitAllocations.describe()}`, cellsByType([commitAllocations], commitAllocations.requests));
}
await writer.drain();
await store.close();
rmSync(dataDir, { recursive: true, force: true });
