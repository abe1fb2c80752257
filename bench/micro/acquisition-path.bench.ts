// The server's own time and allocations per acquisition (the Jupiter
// scenario's request shape), in one process and without sockets: request
// frames go through the Dispatcher (decode, checks, op, engine, LMDB store
// with its group commit) and the replies through the FrameEncoder, exactly as
// a connection would send them. Request bodies go to the dispatcher whole: a
// connection's FrameDecoder is not in this path. Workers of 10 kinds, 100
// `requires` signatures, items at random priorities 0..1000 (seeded:
// support/priorities.ts), 320 acquisitions in flight: each round dequeues 320
// items (count 1, with capabilities), acks each, and waits for the acks'
// commit. The acks come 1 ms after their dequeues, inside leaseWriteDelayMs,
// so a lease is not written before its ack, as in the socket scenario (where
// few are: docs/decisions/002-deferred-lease-writes.md);
// ORQ_BENCH_LEASE_WRITTEN=1 moves the clock past the delay instead, so each
// lease is written first (what a worker holding each item past the delay
// costs).
//
// Printed: µs per acquisition (wall time of the main thread, LMDB's writer
// thread aside) and, for scale, µs per ping through the same path; then,
// from 24 more rounds (support/allocation-count.ts), JS-heap bytes and cells
// allocated per dequeue, per ack with its commit and per ping; the cells are
// exact and repeat run to run, the bytes are within a few per cent (block
// granularity). No socket, no client process: this is what the server could
// do, the load benchmark (bench/load, scenario jupiter) what it does.
//
// Expect (2-core shared machine), min per request: dequeue 2.8-5.0 µs, ack
// 0.8-1.5 µs, ack commit wait 0.7-1.6 µs (strict 2.6-4.4), ping 0.4-0.7 µs;
// allocated: dequeue 14.1 cells (0.9-1.2 KB), ack with its commit 8.6-9.0
// cells (1.0 KB), ping 6.3-6.4 cells (0.3 KB), acquisition 22.6-23.0 cells
// (1.9-2.2 KB), with no record deleted in those rounds; a swept delete adds 5
// cells, and a steady load makes about one per acquisition (see the
// allocation rounds below; docs/decisions/013-lent-replies-and-scratch.md).
//
// Run: ./node_modules/.bin/bun bench/micro/acquisition-path.bench.ts [items] [relaxed|strict]
// (default 100000 relaxed). With `--cpu-prof` before the path, a profile of the loop.
// ORQ_BENCH_ORDER=fifo gives every item priority 0 (the contrast to random).
// ORQ_BENCH_ALLOCATION_TYPES=1 adds the cells by type; ORQ_BENCH_SPLIT_ACK=1
// charges the ack's commit apart from the ack.

import { Encoder } from "@msgpack/msgpack";
import { AllocationMeter, AllocationTotals, cellsByType } from "./support/allocation-count.ts";
import { openInProcessServer, ReplySink } from "./support/in-process-server.ts";
import { priorities } from "./support/priorities.ts";
import type { EnqueueItemInput } from "../../src/engine/api.ts";
import { defaultLimits, leaseWriteDelayMs } from "../../src/limits.ts";
import { DeliveriesReply } from "../../src/protocol/reply-encoder.ts";
import type { Durability } from "../../src/storage/store.ts";

const items = Number(process.argv[2] ?? 100_000);
const durability = (process.argv[3] ?? "relaxed") as Durability;
const signatures = 100;
const kinds = 10;
const inFlight = 320;

const { store, clock, writer, engine, dispatcher, close } = await openInProcessServer("acq", durability, defaultLimits);

/** The receipt of a dequeue-1 reply (the engine's delivery, as the reply carries it). */
function firstReceipt(reply: Record<string, unknown>): string {
  if (!(reply instanceof DeliveriesReply) || reply.deliveries.length === 0) throw new Error(`expected one delivery, got ${JSON.stringify(reply)}`);
  return (reply.deliveries[0] as { receipt: string }).receipt;
}

const payload = new Uint8Array(100).fill(7);
const nextPriority = priorities((process.env.ORQ_BENCH_ORDER ?? "random") as "random" | "fifo");
for (let loaded = 0; loaded < items; loaded += signatures) {
  const batch: EnqueueItemInput[] = [];
  for (let s = 0; s < signatures; s++) {
    const requires = { pool: `p${s % kinds}`, mem_gb: { gte: 8 * Math.floor(s / kinds) } };
    batch.push({ topic: "jupiter", priority: nextPriority(), payload, metadata: new Uint8Array(0), deliverAtMs: null, delayMs: null, leaseMs: null, ttlMs: null, delivery: "at_least_once", maxAttempts: 10, requires, after: null, key: null });
  }
  const r = engine.enqueue("bench", batch, clock.nowMs());
  if (!r.ok) throw new Error(`enqueue: ${r.failure.message}`);
  if (r.value.durable !== null) await r.value.durable;
}

const encoder = new Encoder();
const dequeueBodies = Array.from({ length: kinds }, (_, kind) =>
  encoder.encode({ id: 1, op: "dequeue", ns: "bench", topics: [{ topic: "jupiter", count: 1 }], capabilities: { pool: `p${kind}`, mem_gb: 128, os: "linux" }, wait_ms: 0 }),
);
const pingBody = encoder.encode({ id: 1, op: "ping" });
const sink = new ReplySink();

const allocationRounds = 24;
let acquisitions = 0;
let clientUs = 0;
/** Per round of `inFlight`, µs per acquisition: main-thread time of the dequeues, of the acks (without their commit), and the wait for the acks' commit. */
const dequeueRounds: number[] = [];
const ackRounds: number[] = [];
const commitRounds: number[] = [];

// The steps of one round, shared by the timed rounds and the allocation
// rounds; each round times or meters the spans between them.

/** One dequeue-1 (with capabilities) per request in flight, the kinds in turn; the replies go to the sink. */
function dequeueInFlight(): void {
  for (let i = 0; i < inFlight; i++) dispatcher.handleFrame(sink, dequeueBodies[i % kinds] as Uint8Array);
}

/**
 * How far the clock moves between a round's dequeues and its acks: 1 ms, as
 * the socket scenario's acks come a round trip after their deliveries; past
 * leaseWriteDelayMs with ORQ_BENCH_LEASE_WRITTEN=1 (see the header).
 */
const ackAfterMs = process.env.ORQ_BENCH_LEASE_WRITTEN === "1" ? leaseWriteDelayMs + 1 : 1;

/** The receipts of the dequeues' replies, the sink emptied, and the clock moved to when the acks come. */
function takeReceipts(): string[] {
  const receipts = sink.replies.map(firstReceipt);
  sink.replies = [];
  clock.advance(ackAfterMs);
  return receipts;
}

/** An ack of one receipt each, encoded as the client would (the client's work, not the server's). */
function encodeAcks(receipts: string[]): Uint8Array[] {
  return receipts.map((receipt) => encoder.encode({ id: 2, op: "ack", ns: "bench", receipts: [receipt] }));
}

/** Wait for the commit of what the server took, and the turn that hands out its replies. */
async function commitTaken(): Promise<void> {
  await writer.drain();
  await Promise.resolve();
}

function checkAllAcked(): void {
  if (sink.replies.length !== inFlight || sink.replies.some((reply) => reply.acked !== 1)) throw new Error("an ack did not ack");
}

function pingInFlight(): void {
  for (let i = 0; i < inFlight; i++) dispatcher.handleFrame(sink, pingBody);
}

/** Timed rounds until `until` acquisitions in all. */
async function timedRounds(until: number): Promise<void> {
  while (acquisitions < until) {
    sink.replies = [];
    const dequeueStartMs = performance.now();
    dequeueInFlight();
    dequeueRounds.push(((performance.now() - dequeueStartMs) * 1000) / inFlight);
    const receipts = takeReceipts();
    const clientStartMs = performance.now();
    const ackBodies = encodeAcks(receipts);
    clientUs += (performance.now() - clientStartMs) * 1000;
    const ackStartMs = performance.now();
    for (const body of ackBodies) dispatcher.handleFrame(sink, body);
    const commitStartMs = performance.now();
    ackRounds.push(((commitStartMs - ackStartMs) * 1000) / inFlight);
    await commitTaken();
    commitRounds.push(((performance.now() - commitStartMs) * 1000) / inFlight);
    checkAllAcked();
    acquisitions += inFlight;
  }
}

// Allocations: rounds of the same loop, each phase between two heap
// snapshots (support/allocation-count.ts); after a full collection, warm-up
// rounds fill its holes uncharged, then rounds are charged until one holds a
// collection, which is dropped and the meter collects again. They run halfway
// through the backlog. The ack sweep (storage/lmdb/ack-sweep.ts) deletes an
// acked record once nothing below it in its shard is live, so how many
// records a commit deletes depends on where in the backlog it runs: about
// none halfway through this one (every shard's lowest key stays live until
// the last priority class), about 3.3 per acquisition at its end (the
// deletes held back), one per acquisition over the whole run and under a
// steady load. The rounds report the deletes they saw; each delete is 5 cells
// of lmdb-js's (removeSync inside a transaction: 3 scopes, the closure
// writeInstructions returns, a N-API handle scope).
const meter = new AllocationMeter();
const dequeueAllocations = new AllocationTotals();
const ackAllocations = new AllocationTotals();
const pingAllocations = new AllocationTotals();
const commitAllocations = new AllocationTotals();
const splitAck = process.env.ORQ_BENCH_SPLIT_ACK === "1";
const warmUpRounds = 2;

async function allocationRoundsRun(): Promise<void> {
  let sinceCollection = 0;
  meter.collect();
  for (let round = 0; round < allocationRounds; round++) {
    const charged = sinceCollection >= warmUpRounds;
    sink.replies = [];
    meter.mark(null);
    dequeueInFlight();
    meter.mark(charged ? dequeueAllocations : null, inFlight);
    const ackBodies = encodeAcks(takeReceipts());
    meter.mark(null);
    for (const body of ackBodies) dispatcher.handleFrame(sink, body);
    if (splitAck) meter.mark(charged ? ackAllocations : null, inFlight);
    await commitTaken();
    meter.mark(charged ? (splitAck ? commitAllocations : ackAllocations) : null, inFlight);
    checkAllAcked();
    sink.replies = [];
    pingInFlight();
    meter.mark(charged ? pingAllocations : null, inFlight);
    if (meter.endRound()) {
      sinceCollection++;
    } else {
      meter.collect();
      sinceCollection = 0;
    }
  }
}

// The allocation rounds take (allocationRounds x inFlight) items out of the middle of the timed ones.
const timedItems = items - inFlight * (allocationRounds + 1);
const startMs = performance.now();
await timedRounds(Math.floor(timedItems / 2));
const allocationStartMs = performance.now();
const storedBefore = store.storedCounts().items;
await allocationRoundsRun();
const deletesPerAcquisition = (storedBefore - store.storedCounts().items) / (allocationRounds * inFlight);
const allocationMs = performance.now() - allocationStartMs;
await timedRounds(timedItems);
const acquisitionUs = ((performance.now() - startMs - allocationMs) * 1000 - clientUs) / acquisitions;

const pingRounds: number[] = [];
for (let round = 0; round < 500; round++) {
  sink.replies = [];
  const pingStartMs = performance.now();
  pingInFlight();
  pingRounds.push(((performance.now() - pingStartMs) * 1000) / inFlight);
}
const pingUs = pingRounds.reduce((a, b) => a + b, 0) / pingRounds.length;

/** "min / median" of the rounds: on a shared machine the quietest round is the steadiest figure. */
function minMedian(rounds: number[]): string {
  const sorted = [...rounds].sort((a, b) => a - b);
  return `${(sorted[0] as number).toFixed(1)} / ${(sorted[Math.floor(sorted.length / 2)] as number).toFixed(1)}`;
}

console.log(
  `${durability}: ${acquisitions} acquisitions, ${acquisitionUs.toFixed(1)} µs each (dequeue 1 with capabilities + ack ${ackAfterMs} ms later, main thread); ` +
    `ping ${pingUs.toFixed(2)} µs; ratio ping/acquisition ${(pingUs / acquisitionUs).toFixed(3)}\n` +
    `  µs per request, min / median of rounds of ${inFlight}: dequeue ${minMedian(dequeueRounds)}, ack ${minMedian(ackRounds)}, ` +
    `wait for the ack commit ${minMedian(commitRounds)}, ping ${minMedian(pingRounds)}`,
);
console.log(
  `  allocated on the JS heap per request (${dequeueAllocations.requests / inFlight} of ${allocationRounds} rounds charged): ` +
    `dequeue ${dequeueAllocations.describe()}; ack with its commit ${ackAllocations.describe()}; ping ${pingAllocations.describe()}; ` +
    `acquisition ${((dequeueAllocations.bytes + ackAllocations.bytes + commitAllocations.bytes) / Math.max(1, dequeueAllocations.requests)).toFixed(0)} bytes, ` +
    `${((dequeueAllocations.cells + ackAllocations.cells + commitAllocations.cells) / Math.max(1, dequeueAllocations.requests)).toFixed(1)} cells, with ${deletesPerAcquisition.toFixed(2)} records deleted per acquisition`,
);
if (process.env.ORQ_BENCH_ALLOCATION_TYPES === "1") {
  console.log("  cells per dequeue by type:", cellsByType([dequeueAllocations], dequeueAllocations.requests));
  console.log("  cells per ack by type:", cellsByType([ackAllocations], ackAllocations.requests));
  console.log("  cells per ping by type:", cellsByType([pingAllocations], pingAllocations.requests));
  if (splitAck) console.log("  commit", commitAllocations.describe(), cellsByType([commitAllocations], commitAllocations.requests));
}
await close();
