// What `wait` and ack results cost the server, in one process, through the
// server's op layer: request frames go to the Dispatcher (decode, the wait
// and ack ops, the Engine) and each reply is encoded as a connection would
// send it. The op layer, not the Engine alone, because a parked wait is more
// than the engine's ItemWait: the wait op's promise chain to its reply and
// the dispatcher's completion of it (server/ops/wait.ts,
// server/dispatcher.ts's completeWhenSettled) are held per wait too, and the
// per-connection bound (item_waits_per_connection_max) is by connection.
//
// Parts, each in a process of its own (as group-pick.bench.ts reads memory:
// in one process an engine let go of was not all collected before the next
// reading, conservative stack scanning keeping what a register points to):
// - waits (MemoryStore + GroupCommitter, 16 shards, on a ManualClock): N
//   items enqueued and leased; then N waits, one on each item, from 100
//   connections (N / 100 each; 100,000 and 1,000 are item_waits_total_max
//   and item_waits_per_connection_max), all parked at once. Memory per parked
//   wait: bun:jsc heapStats().heapSize after a full collection, with the
//   waits parked less before, over N. Wake: the items are acked, 100
//   receipts an ack, and the time from the first ack to the last reply
//   (every wait's and every ack's: each waits for the acks' commit) is read;
//   the same acks over N more items with no wait on them, timed to their
//   last reply just before, are the acks' own share, so
//   (wake - acks alone) / N is what a wait adds to the ack that ends it.
//   Both after a warm-up of 1,000 items of each kind.
// - results, once per result size (none, 100 B, 1 KiB), over a store that
//   keeps nothing (null-storage.ts: only the engine's heap counts, as with
//   LMDB, whose records live outside it): N items enqueued, leased and acked
//   with that result each (none: the ack carries no `results`, the acked-log
//   path), in rounds: a first, then 3 read (the heap after full
//   collections, less the same before the round), so what the live items'
//   structures grew to (and keep) while holding N is in every reading. A
//   round's reading now and then came out 10 MB (at 20,000 items) above or
//   below the others, a round's garbage kept through one collection (the
//   collector scans the stack conservatively): the median of the 3 is the
//   figure, each is in the JSON. That over N is what one retained acked
//   outcome costs; less the result's bytes, what it costs beyond them; less
//   the figure without results, what a result adds.
//
// No targets (issue 53 asks for the figures): printed, never asserted.
//
// Run: ./node_modules/.bin/bun bench/micro/waits-cost.bench.ts [--waits 100000] [--owners 100] [--result-items 100000] [--json]
// --json ends the output with one line, `waits-cost-json {...}`, that bench:load reads (bench/load/waits-cost-bound.ts).

import { heapStats } from "bun:jsc";
import { Encoder } from "@msgpack/msgpack";
import { parseArgs } from "node:util";
import type { DequeueInput, EnqueueItemInput } from "../../src/engine/api.ts";
import { Engine } from "../../src/engine/engine.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { defaultLimits, leaseWriteDelayMs } from "../../src/limits.ts";
import { FrameEncoder } from "../../src/protocol/frame-encoder.ts";
import type { WireError } from "../../src/protocol/wire-types.ts";
import { allNamespaces, TokenTable } from "../../src/server/auth.ts";
import { Dispatcher, type RequestSource } from "../../src/server/dispatcher.ts";
import { silentLogger } from "../../src/server/logger.ts";
import type { Session } from "../../src/server/op-types.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import type { Store } from "../../src/storage/store.ts";
import type { Writer } from "../../src/storage/writer.ts";
import { item } from "../../test/engine/support/item-input.ts";
import { median } from "../support/median.ts";
import { nullStorage } from "./null-storage.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    waits: { type: "string" },
    owners: { type: "string" },
    "result-items": { type: "string" },
    part: { type: "string" },
    "result-bytes": { type: "string" },
    json: { type: "boolean", default: false },
  },
});
const count = (text: string | undefined, fallback: number) => (text === undefined ? fallback : Number(text.replaceAll("_", "")));
const waitsTotal = count(values.waits, defaultLimits.itemWaitsTotalMax);
const owners = count(values.owners, 100);
const resultItems = count(values["result-items"], 100_000);
const ns = "bench";
const topic = "t0";
const shards = 16;
/** Items per enqueue and per dequeue while loading (the contract's items_per_enqueue_max and count_per_dequeue_max). */
const loadBatch = 1000;
/** Receipts per ack, as the drain scenario acks (take 100 + ack). */
const receiptsPerAck = 100;
const warmupItems = 1000;
/** The result sizes of the results part: none, 100 B, 1 KiB. */
const resultSizes = [0, 100, 1024];

/** Replies counted, over one connection or many, and a promise for when they reach a count. */
class ReplyTally {
  replies = 0;
  failures = 0;
  private target = Number.POSITIVE_INFINITY;
  private reached: () => void = () => {};

  count(reply: Record<string, unknown>): void {
    this.replies++;
    if (reply.ok !== true) this.failures++;
    if (this.replies >= this.target) this.reached();
  }

  /** Resolves once `replies` replies have been counted in all. */
  reach(replies: number): Promise<void> {
    if (this.replies >= replies) return Promise.resolve();
    return new Promise((resolve) => {
      this.target = replies;
      this.reached = resolve;
    });
  }
}

/** A connection as the dispatcher sees one: it encodes each reply as a connection would, and counts it on its tallies. */
class CountingSource implements RequestSource {
  readonly session: Session;
  readonly frames = new FrameEncoder();
  readonly own = new ReplyTally();
  bytes = 0;
  constructor(
    connectionId: number,
    /** Another tally that counts this connection's replies too (the waits part's, over every connection). */
    private readonly shared: ReplyTally | null = null,
  ) {
    this.session = { connectionId, scope: allNamespaces, readOnly: false };
  }
  send(reply: Record<string, unknown>): void {
    this.bytes += this.frames.encode(reply).length;
    this.own.count(reply);
    this.shared?.count(reply);
  }
  fail(error: WireError): void {
    throw new Error(`connection failed: ${error.code} ${error.message}`);
  }
  requestStarted(): void {}
  requestFinished(): void {}
}

interface Harness {
  engine: Engine;
  writer: Writer;
  dispatcher: Dispatcher;
  clock: ManualClock;
}

function harness(store: Store, writer: Writer, clock: ManualClock): Harness {
  const engine = Engine.recover({ store, writer, limits: defaultLimits, namespaces: {}, nowMs: clock.nowMs() });
  const dispatcher = new Dispatcher({
    engine,
    limits: defaultLimits,
    clock,
    tokens: new TokenTable([]),
    serverInfo: { version: "bench", nodeId: "bench", shards },
    logger: silentLogger,
    serverStats: () => ({}),
    fatal: (error) => {
      throw error;
    },
  });
  return { engine, writer, dispatcher, clock };
}

/** Enqueues `items` items and leases them all: their ids and receipts, in the same order. */
async function loadLeased(h: Harness, items: number): Promise<{ ids: string[]; receipts: string[] }> {
  const nowMs = h.clock.nowMs();
  for (let first = 0; first < items; first += loadBatch) {
    const batch: EnqueueItemInput[] = [];
    for (let i = first; i < Math.min(items, first + loadBatch); i++) batch.push(item(topic));
    const result = h.engine.enqueue(ns, batch, nowMs);
    if (!result.ok) throw new Error(`enqueue failed: ${result.failure.message}`);
  }
  await h.writer.drain();
  const ids: string[] = [];
  const receipts: string[] = [];
  const input: DequeueInput = { topics: [{ topic, count: loadBatch }], capabilities: null, waitMs: 0, leaseMs: null, owner: 1 };
  while (ids.length < items) {
    const result = h.engine.dequeue(ns, input, nowMs);
    if (!result.ok || result.kind !== "done" || result.deliveries.length === 0) throw new Error(`dequeue failed after ${ids.length} of ${items}`);
    for (const delivery of result.deliveries) {
      ids.push(delivery.id);
      receipts.push(delivery.receipt);
    }
  }
  await h.writer.drain();
  return { ids, receipts };
}

const encoder = new Encoder();

/** Acks every receipt through the dispatcher, `receiptsPerAck` an ack, each with a result of `resultBytes` (0: no `results`). */
function ackAll(h: Harness, source: CountingSource, receipts: string[], resultBytes: number): void {
  const result = new Uint8Array(resultBytes).fill(7);
  for (let first = 0; first < receipts.length; first += receiptsPerAck) {
    const slice = receipts.slice(first, first + receiptsPerAck);
    const request: Record<string, unknown> = { id: first + 1, op: "ack", ns, receipts: slice };
    if (resultBytes > 0) request.results = slice.map(() => result);
    h.dispatcher.handleFrame(source, encoder.encode(request));
  }
}

/**
 * Moves the clock past leaseWriteDelayMs and runs the deadlines due: the
 * acks came inside the delay, so no lease was written, and what the engine
 * keeps for a lease write until then goes, as it does on a server a moment
 * after its acks (the clock stands still otherwise).
 */
async function letDelaysPass(h: Harness): Promise<void> {
  h.clock.advance(leaseWriteDelayMs + 1);
  const nowMs = h.clock.nowMs();
  for (let next = h.engine.nextDeadlineMs(); next !== null && next <= nowMs; next = h.engine.nextDeadlineMs()) h.engine.tick(nowMs);
  await h.writer.drain();
}

/**
 * The heap after full collections, each from the event loop (an await
 * before it): the collector scans the stack conservatively, and a collection
 * from deep in a call can keep garbage a stale pointer still names.
 */
async function heapBytes(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    await Bun.sleep(10);
    Bun.gc(true);
  }
  return heapStats().heapSize;
}

interface WaitsFigures {
  parked: number;
  owners: number;
  perOwner: number;
  heapBytes: number;
  perWaitBytes: number;
  receiptsPerAck: number;
  /** From the first ack to the last wait's reply. */
  wakeMs: number;
  /** The same acks over as many items no wait is on. */
  acksAloneMs: number;
  /** (wakeMs - acksAloneMs) / parked, in µs: what a wait adds to the ack that ends it. */
  wakeUsPerWait: number;
  answered: number;
}

/** Parks one wait on each of `ids`, from the connections in turn; `answered` counts every wait's reply. */
function parkWaits(h: Harness, sources: CountingSource[], ids: string[], answered: ReplyTally): void {
  const answeredBefore = answered.replies;
  for (let i = 0; i < ids.length; i++) {
    const source = sources[i % sources.length] as CountingSource;
    h.dispatcher.handleFrame(source, encoder.encode({ id: i + 1, op: "wait", ns, ids: [ids[i]], wait_ms: defaultLimits.waitMsMax }));
  }
  const early = answered.replies - answeredBefore;
  if (early !== 0) throw new Error(`waits: ${early} of ${ids.length} waits answered at once (refused, or their items not live)`);
}

/** Times `ackAll` over `receipts` until every ack is answered and `until` resolves (the waits' replies; none for acks alone). */
async function timeAcks(h: Harness, receipts: string[], until: () => Promise<void>): Promise<number> {
  const acker = new CountingSource(1_000_000);
  const started = performance.now();
  ackAll(h, acker, receipts, 0);
  await Promise.all([acker.own.reach(Math.ceil(receipts.length / receiptsPerAck)), until()]);
  const elapsed = performance.now() - started;
  await h.writer.drain();
  if (acker.own.failures !== 0) throw new Error(`waits: ${acker.own.failures} acks failed`);
  return elapsed;
}

async function measureWaits(): Promise<WaitsFigures> {
  const clock = new ManualClock(1_700_000_000_000);
  const store = new MemoryStore({ shards });
  const h = harness(store, new GroupCommitter(store, { clock }), clock);
  // Every wait's reply is counted here too, whichever connection it went to.
  const answered = new ReplyTally();
  const sources = Array.from({ length: owners }, (_, o) => new CountingSource(o + 1, answered));
  const answeredAll = (n: number) => () => answered.reach(n);
  const noMore = () => Promise.resolve();

  // Warm-up: both paths, at a small size.
  const warm = await loadLeased(h, warmupItems);
  parkWaits(h, sources, warm.ids, answered);
  await timeAcks(h, warm.receipts, answeredAll(warmupItems));
  const warmAlone = await loadLeased(h, warmupItems);
  await timeAcks(h, warmAlone.receipts, noMore);

  const alone = await loadLeased(h, waitsTotal);
  const acksAloneMs = await timeAcks(h, alone.receipts, noMore);

  const awaited = await loadLeased(h, waitsTotal);
  const before = await heapBytes();
  parkWaits(h, sources, awaited.ids, answered);
  const after = await heapBytes();
  const parked = h.engine.stats(null, clock.nowMs()).engine?.itemWaitsParked;
  if (parked === undefined || parked !== waitsTotal) throw new Error(`waits: ${parked} parked, not ${waitsTotal}`);
  const wakeMs = await timeAcks(h, awaited.receipts, answeredAll(warmupItems + waitsTotal));
  if (answered.failures !== 0) throw new Error(`waits: ${answered.failures} waits answered with an error`);
  return {
    parked,
    owners,
    perOwner: Math.ceil(waitsTotal / owners),
    heapBytes: after - before,
    perWaitBytes: (after - before) / waitsTotal,
    receiptsPerAck,
    wakeMs,
    acksAloneMs,
    wakeUsPerWait: ((wakeMs - acksAloneMs) * 1000) / waitsTotal,
    answered: answered.replies - warmupItems,
  };
}

interface OutcomeFigures {
  /** 0: the ack carried no `results`. */
  resultBytes: number;
  items: number;
  /** The median of the rounds' readings. */
  heapBytes: number;
  roundsHeapBytes: number[];
  /** heapBytes / items: one retained acked outcome, its result included. */
  perOutcomeBytes: number;
  /** perOutcomeBytes - resultBytes. */
  perOutcomeBeyondResultBytes: number;
  /** perOutcomeBytes less the same without a result: what the result adds (null for none). */
  perResultBytes: number | null;
  /** perResultBytes - resultBytes. */
  perResultBeyondBytes: number | null;
}

/**
 * One round of the results part: `n` items enqueued, leased and acked with
 * results of `resultBytes`, and the lease-write delay let pass. The id and
 * receipt lists are emptied before it returns: a stale pointer to one (the
 * collector scans the stack conservatively) would otherwise keep `n` strings
 * alive through the reading.
 */
async function ackedRound(h: Harness, acker: CountingSource, n: number, resultBytes: number): Promise<void> {
  const { ids, receipts } = await loadLeased(h, n);
  ackAll(h, acker, receipts, resultBytes);
  ids.length = 0;
  receipts.length = 0;
  await letDelaysPass(h);
}

/** Measured rounds of the results part, after the first (their median is the figure). */
const outcomeRounds = 3;

/** The results part for one size: the heap that `resultItems` acked outcomes with results of `resultBytes` hold. */
async function measureOutcomes(resultBytes: number): Promise<{ heapBytes: number; roundsHeapBytes: number[] }> {
  const { store, writer } = nullStorage(shards);
  const h = harness(store, writer, new ManualClock(1_700_000_000_000));
  const acker = new CountingSource(1);
  // A first round at the full size: the topic, the outcome table and the acked log exist before the first reading,
  // and what the live items' structures grew to holding N (and keep) is in both readings, so the difference is the outcomes'.
  await ackedRound(h, acker, resultItems, resultBytes);
  const roundsHeapBytes: number[] = [];
  let before = await heapBytes();
  for (let round = 0; round < outcomeRounds; round++) {
    await ackedRound(h, acker, resultItems, resultBytes);
    const after = await heapBytes();
    roundsHeapBytes.push(after - before);
    before = after;
  }
  if (acker.own.failures !== 0) throw new Error(`results: ${acker.own.failures} acks failed`);
  // Read after the readings, so the engine is live through the collections.
  const retained = h.engine.stats(null, h.clock.nowMs()).engine?.resultsRetained;
  const expected = resultBytes === 0 ? 0 : (1 + outcomeRounds) * resultItems;
  if (retained !== expected) throw new Error(`results: ${retained} results retained, not ${expected}`);
  return { heapBytes: median(roundsHeapBytes), roundsHeapBytes };
}

/** Runs this file with `args` in a child process and reads its `part-json` line. */
async function inChild<T>(args: string[]): Promise<T> {
  const child = Bun.spawn([process.execPath, import.meta.path, ...args], { stdout: "pipe", stderr: "inherit" });
  const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  const line = out.split("\n").find((text) => text.startsWith("part-json "));
  if (code !== 0 || line === undefined) throw new Error(`waits cost: part ${args.join(" ")} failed (exit ${code}): ${out.slice(-500)}`);
  return JSON.parse(line.slice("part-json ".length)) as T;
}

interface OutcomeReading {
  resultBytes: number;
  heapBytes: number;
  roundsHeapBytes: number[];
}

function outcomeFigures(readings: OutcomeReading[]): OutcomeFigures[] {
  const perOutcome = (heap: number) => heap / resultItems;
  const none = readings.find((reading) => reading.resultBytes === 0);
  return readings.map(({ resultBytes, heapBytes, roundsHeapBytes }) => {
    const perOutcomeBytes = perOutcome(heapBytes);
    const perResultBytes = resultBytes === 0 || none === undefined ? null : perOutcomeBytes - perOutcome(none.heapBytes);
    return {
      resultBytes, items: resultItems, heapBytes, roundsHeapBytes, perOutcomeBytes, perOutcomeBeyondResultBytes: perOutcomeBytes - resultBytes,
      perResultBytes, perResultBeyondBytes: perResultBytes === null ? null : perResultBytes - resultBytes,
    };
  });
}

async function main(): Promise<void> {
  if (values.part === "waits") {
    console.log(`part-json ${JSON.stringify(await measureWaits())}`);
    return;
  }
  if (values.part === "results") {
    const resultBytes = count(values["result-bytes"], 0);
    console.log(`part-json ${JSON.stringify({ resultBytes, ...(await measureOutcomes(resultBytes)) })}`);
    return;
  }
  if (values.part !== undefined) throw new Error("--part: waits or results");
  const sizes = ["--waits", String(waitsTotal), "--owners", String(owners), "--result-items", String(resultItems)];
  const waits = await inChild<WaitsFigures>(["--part", "waits", ...sizes]);
  const readings: OutcomeReading[] = [];
  for (const resultBytes of resultSizes) readings.push(await inChild(["--part", "results", "--result-bytes", String(resultBytes), ...sizes]));
  const outcomes = outcomeFigures(readings);
  const b = (n: number | null) => (n === null ? "-" : `${n.toFixed(1)} B`);
  console.log(
    [
      `waits: ${waits.parked.toLocaleString()} parked at once over ${waits.owners} connections (${waits.perOwner} each), one live item each`,
      `  memory per parked wait (heap after a full collection): ${b(waits.perWaitBytes)}`,
      `  wake: ${waits.wakeMs.toFixed(1)} ms from the first ack (${waits.receiptsPerAck} receipts an ack) to the last wait answered; ` +
        `the same acks with no wait ${waits.acksAloneMs.toFixed(1)} ms; ${waits.wakeUsPerWait.toFixed(2)} µs per wait`,
      `retained acked outcomes, ${resultItems.toLocaleString()} items (engine heap, a store that keeps nothing):`,
      ...outcomes.map(
        (o) =>
          `  result ${o.resultBytes === 0 ? "none" : `${o.resultBytes} B`}: ${b(o.perOutcomeBytes)} per outcome, ${b(o.perOutcomeBeyondResultBytes)} beyond the result` +
          (o.perResultBytes === null ? "" : `; the result adds ${b(o.perResultBytes)}, ${b(o.perResultBeyondBytes)} beyond its bytes`),
      ),
    ].join("\n"),
  );
  if (values.json === true) console.log(`waits-cost-json ${JSON.stringify({ waits, results: { items: resultItems, receiptsPerAck, outcomes } })}`);
}

await main();
