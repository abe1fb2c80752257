// In-process engine cost, without storage: enqueue (batches of 1 and 100),
// and dequeue one + ack with 1,000,000 ready items spread over 16 shards, with
// and without matching (10 signature groups, a worker that may take 5). Items
// carry random priorities 0..1000 (seeded: support/priorities.ts). The
// Writer is a no-op so the figures are the engine's own (the GroupCommitter
// and LMDB costs are measured in storage-commit.bench.ts). Target: pick + lease of the
// best match p50 < 3 µs at 1,000,000 ready items.
// Run: ./node_modules/.bin/bun bench/micro/engine.bench.ts [ready items per topic, default 1000000; at least
// 100000, as each dequeue + nack spends one of an item's 10 attempts]

import { bench, group, run } from "mitata";
import type { DequeueInput, EnqueueItemInput } from "../../src/engine/api.ts";
import { Engine } from "../../src/engine/engine.ts";
import { nullStorage } from "./null-storage.ts";
import { priorities } from "./support/priorities.ts";
import { defaultLimits } from "../../src/limits.ts";

const shards = 16;
const ready = Number(process.argv[2] ?? 1_000_000);
const label = ready.toLocaleString("en-US");
const nextPriority = priorities("random");
const { store, writer, payload, empty } = nullStorage(shards);

let nowMs = 1_700_000_000_000;
const engine = Engine.recover({ store, writer, limits: { ...defaultLimits, outcomeRetentionMs: 1000 }, namespaces: {}, nowMs });
function input(topic: string, priority: number, requires: Record<string, unknown> | null = null): EnqueueItemInput {
  return { topic, priority, payload, metadata: empty, deliverAtMs: null, delayMs: null, leaseMs: null, ttlMs: null, delivery: "at_least_once", maxAttempts: 10, requires, after: null, key: null };
}

// Fill: `ready` items (1,000,000 by default) in topic "big" (one enqueue per 1,000 so they spread
// over the shards), and as many in "matched" over 10 signatures (gpu = 0..9).
for (let b = 0; b < ready / 1000; b++) {
  const batch: EnqueueItemInput[] = [];
  for (let i = 0; i < 1000; i++) batch.push(input("big", nextPriority()));
  engine.enqueue("bench", batch, nowMs);
  const matched: EnqueueItemInput[] = [];
  for (let i = 0; i < 1000; i++) matched.push(input("matched", nextPriority(), { gpu: i % 10 }));
  engine.enqueue("bench", matched, nowMs);
}
await new Promise((r) => setImmediate(r));

const one = [input("small", 0)];
const hundred = Array.from({ length: 100 }, () => input("small", 0));
const takeBig: DequeueInput = { topics: [{ topic: "big", count: 1 }], capabilities: null, waitMs: 0, leaseMs: null, owner: 1 };
const takeMatched: DequeueInput = { topics: [{ topic: "matched", count: 1 }], capabilities: { gpu: [0, 2, 4, 6, 8] }, waitMs: 0, leaseMs: null, owner: 1 };

function dequeueAndRequeue(req: DequeueInput): void {
  const r = engine.dequeue("bench", req, nowMs);
  if (!r.ok || r.kind !== "done") throw new Error("dequeue failed");
  const d = r.deliveries[0];
  if (d === undefined) throw new Error("nothing delivered");
  // nack puts it back, so the index stays at `ready` items.
  engine.nack("bench", [{ receipt: d.receipt, delayMs: null, metadata: null }], nowMs);
}

group(`at ${label} ready, random priorities 0..1000, 16 shards (no storage)`, () => {
  bench("dequeue 1 + nack (no requires)", () => dequeueAndRequeue(takeBig));
  bench("dequeue 1 + nack (10 signatures, worker takes 5)", () => dequeueAndRequeue(takeMatched));
  // An enqueued item becomes takeable once its commit resolves (a microtask here), hence async.
  bench("enqueue 1, dequeue 1, ack (async: waits for the commit)", async () => {
    const e = engine.enqueue("bench", one, nowMs);
    if (e.ok) await e.value.durable;
    const r = engine.dequeue("bench", { ...takeBig, topics: [{ topic: "small", count: 1 }] }, nowMs);
    if (!r.ok || r.kind !== "done") throw new Error("dequeue failed");
    const d = r.deliveries[0] as { receipt: string };
    engine.ack("bench", [d.receipt], nowMs);
    nowMs++;
  });
});

// Last: these keep every item they enqueue, so the heap grows while they run.
group("enqueue (no storage)", () => {
  bench("1 item", () => {
    engine.enqueue("bench", one, nowMs);
  });
  bench("100 items", () => {
    engine.enqueue("bench", hundred, nowMs);
  });
});

await run();

// mitata's averages at this size include major GC pauses (2,000,000 live items);
// the pick + lease figure the target speaks of is the median below: dequeue of
// one item, timed in batches of 100, the batch's items nacked back between batches.
function batchMedians(name: string, req: DequeueInput): void {
  const samples: number[] = [];
  const receipts: Array<{ receipt: string; delayMs: null; metadata: null }> = [];
  for (let round = 0; round < 200; round++) {
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) {
      const r = engine.dequeue("bench", req, nowMs);
      if (!r.ok || r.kind !== "done") throw new Error("dequeue failed");
      receipts.push({ receipt: (r.deliveries[0] as { receipt: string }).receipt, delayMs: null, metadata: null });
    }
    samples.push(((performance.now() - t0) * 1000) / 100);
    engine.nack("bench", receipts, nowMs);
    receipts.length = 0;
  }
  samples.sort((a, b) => a - b);
  console.log(`${name}: dequeue 1 p50 ${samples[100]?.toFixed(2)} µs, p90 ${samples[180]?.toFixed(2)} µs (batch medians)`);
}
batchMedians(`${label} ready, no requires`, takeBig);
batchMedians(`${label} ready, 10 signatures, worker eligible for 5`, takeMatched);
