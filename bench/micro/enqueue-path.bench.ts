// The server's own time and JS-heap allocations per enqueued item (for the
// memory scenario: the enqueue path's garbage is what the server's anonymous
// memory holds 1 s after a load), in one process and without sockets: real
// enqueue frames go through the Dispatcher (decode, checks, op, engine, LMDB
// store with its group commit, strict by default) and the replies (ids)
// through the FrameEncoder, as a connection would send them. Each round sends
// `requests` enqueue frames of `batch` items (100-byte payloads, one topic,
// default settings) and waits for their commit. Printed: min / median µs per
// item over the rounds (main thread, LMDB's writer thread aside); then, from
// more rounds metered by support/allocation-count.ts, JS-heap cells and bytes
// per enqueued item and per request, commit included. Cells are exact and
// repeat run to run; bytes are within a few per cent (block granularity).
// Payload bytes the store copies off-heap are not counted.
// Expect (2-core shared machine, strict): batch 100 min 2.4-4.5 µs per item,
// 9.1-10.2 cells (1.15-1.3 KB) per item; batch 1 min 3.8-6 µs, 42.0-44.1
// cells (2.4-2.9 KB) per request (docs/decisions/013-lent-replies-and-scratch.md).
// Run: ./node_modules/.bin/bun bench/micro/enqueue-path.bench.ts [batch] [relaxed|strict] [items]
// (default 100 strict 300000). ORQ_BENCH_ALLOCATION_TYPES=1 adds the cells
// per request by type; ORQ_BENCH_SPLIT_COMMIT=1 charges the commit and replies apart.

import { Encoder } from "@msgpack/msgpack";
import { AllocationMeter, AllocationTotals, cellsByType } from "./support/allocation-count.ts";
import { openInProcessServer, ReplySink } from "./support/in-process-server.ts";
import { defaultLimits } from "../../src/limits.ts";
import type { Durability } from "../../src/storage/store.ts";

const batch = Number(process.argv[2] ?? 100);
const durability = (process.argv[3] ?? "strict") as Durability;
const items = Number(process.argv[4] ?? 300_000);
/** Requests per round: 8 connections' worth of batches in flight, as in bench/load's memory scenario. */
const requests = Math.max(8, Math.floor(800 / batch));

const limits = { ...defaultLimits, liveItemsMax: Math.max(defaultLimits.liveItemsMax, items * 2) };
const { writer, dispatcher, close } = await openInProcessServer("enq", durability, limits);

const encoder = new Encoder();
const payload = new Uint8Array(100).fill(7);
const body = encoder.encode({
  id: 1,
  op: "enqueue",
  ns: "bench",
  items: Array.from({ length: batch }, (_, i) => ({ topic: "load", priority: i % 3, payload })),
});
/** Counts the replies instead of keeping them (a growing list would be charged to the requests), refusing any without its ids. */
class CountingSink extends ReplySink {
  answered = 0;
  override send(reply: Record<string, unknown>): void {
    if ((reply.ids as string[] | undefined)?.length !== batch) throw new Error(`enqueue failed: ${JSON.stringify(reply)}`);
    this.bytes += this.frames.encode(reply).length;
    this.answered++;
  }
}
const sink = new CountingSink();

/** One round: `requests` frames, then the wait for their commit (the replies are sent when it lands). */
async function round(afterRequests?: () => void): Promise<void> {
  sink.answered = 0;
  for (let r = 0; r < requests; r++) dispatcher.handleFrame(sink, body);
  afterRequests?.();
  await writer.drain();
  await Promise.resolve();
  await Promise.resolve();
}

/** Every request of the round answered (after its commit). */
function checkReplies(): void {
  if (sink.answered !== requests) throw new Error(`${sink.answered} of ${requests} requests answered`);
}

const perRound = requests * batch;
const allocationRounds = 24;
const timedRounds: number[] = [];
let enqueued = 0;
while (enqueued < items - perRound * allocationRounds) {
  const startMs = performance.now();
  await round();
  timedRounds.push(((performance.now() - startMs) * 1000) / perRound);
  checkReplies();
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
  checkReplies();
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
await close();
