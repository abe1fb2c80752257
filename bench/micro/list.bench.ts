// The `list` op's cost at a million items, without storage (a no-op Writer;
// payloads read back from a store that answers one fixed record): ready
// items in delivery order at the start, the middle and the end of a
// 1,000,000-item topic (the walk is O(items before the cursor)), the first
// walk over freshly enqueued heaps (it pairs the roots' long child lists
// once), and the enqueue-order walk for a dense topic (1,000,000 delayed
// items) and a sparse one (1,000 delayed items among 2,000,000), where a page
// stops after limits.listScanSlotsMax slots. The figures behind the list
// bounds are in their comments in src/limits.ts.
// Run: ./node_modules/.bin/bun bench/micro/list.bench.ts

import { bench, group, run } from "mitata";
import type { EnqueueItemInput, ListCursor } from "../../src/engine/api.ts";
import { Engine } from "../../src/engine/engine.ts";
import { nullStorage } from "./null-storage.ts";
import { defaultLimits } from "../../src/limits.ts";

const shards = 16;
const { store, writer, payload, empty } = nullStorage(shards);

const nowMs = 1_700_000_000_000;
const engine = Engine.recover({ store, writer, limits: defaultLimits, namespaces: {}, nowMs });
function input(topic: string, priority: number, delayMs: number | null): EnqueueItemInput {
  return { topic, priority, payload, metadata: empty, deliverAtMs: null, delayMs, leaseMs: null, ttlMs: null, delivery: "at_least_once", maxAttempts: 10, requires: null, after: null, key: null };
}

// 1,000,000 ready items in "big" (priorities 0..999 at random), 1,000,000 delayed in "later",
// and 1,000 delayed in "sparse", one per 2,000 items of the others.
for (let b = 0; b < 1000; b++) {
  const batch: EnqueueItemInput[] = [];
  for (let i = 0; i < 1000; i++) batch.push(input("big", (Math.random() * 1000) | 0, null));
  engine.enqueue("bench", batch, nowMs);
  const later: EnqueueItemInput[] = [];
  for (let i = 0; i < 1000; i++) later.push(input("later", 0, 3_600_000));
  engine.enqueue("bench", later, nowMs);
  engine.enqueue("bench", [input("sparse", 0, 3_600_000)], nowMs);
}
await new Promise((r) => setImmediate(r));

function list(topic: string, state: "ready" | "delayed", after: ListCursor | null, limit = 100) {
  return engine.list("bench", topic, { state, limit, after }, nowMs);
}

function timeMs(action: () => unknown): number {
  const t0 = performance.now();
  action();
  return performance.now() - t0;
}

// One-shot figures: the very first walk pays for pairing the fresh heaps' roots.
console.log(`first page of 100 ready on fresh heaps: ${timeMs(() => list("big", "ready", null)).toFixed(2)} ms`);
console.log(`second page of 100 ready: ${timeMs(() => list("big", "ready", null)).toFixed(2)} ms`);
const middle: ListCursor = { phase: "ready", priority: 500, deliverAtMs: nowMs, key: Number.MAX_SAFE_INTEGER };
const end: ListCursor = { phase: "ready", priority: 998, deliverAtMs: nowMs, key: Number.MAX_SAFE_INTEGER };
console.log(`first page after 500,000 ready: ${timeMs(() => list("big", "ready", middle)).toFixed(2)} ms`);
console.log(`first page after 999,000 ready: ${timeMs(() => list("big", "ready", end)).toFixed(2)} ms`);
let pages = 0;
let found = 0;
let after: ListCursor | null = null;
const sparseMs = timeMs(() => {
  for (;;) {
    const page = list("sparse", "delayed", after, 1000);
    pages++;
    found += page.items.length;
    if (page.next === null) break;
    after = page.next;
  }
});
console.log(`all 1,000 sparse delayed items (among 2,001,000): ${pages} pages, ${found} items, ${sparseMs.toFixed(1)} ms in all`);

group("list at 1,000,000 ready + 1,000,000 delayed, 16 shards (no storage)", () => {
  bench("ready, first page of 100", () => list("big", "ready", null));
  bench("ready, page of 100 after 500,000", () => list("big", "ready", middle));
  bench("ready, page of 100 after 999,000", () => list("big", "ready", end));
  bench("delayed (dense topic), first page of 100", () => list("later", "delayed", null));
  bench("delayed (dense topic), page of 1,000 after 500,000", () => list("later", "delayed", { phase: "enqueued", key: 1_000_000 }, 1000));
  bench("delayed (sparse topic), one page (stops at the slot budget)", () => list("sparse", "delayed", null, 1000));
});

await run();
