// What one ready item costs in the JS heap (for the memory target): an engine
// over a real LMDB store takes N items through the engine API (batches of
// 100, 100-byte payloads, strict commits awaited), first plain items, then
// items with `requires` as the Jupiter scenario enqueues them, all at random
// priorities 0..1000 (seeded: support/priorities.ts). After each phase a full
// collection runs and `bun:jsc` heapStats() gives the heap size and object
// count; printed per item, with the RSS parts for scale. The figures are
// deterministic (a collected heap, no sockets, no timing), so they compare
// across builds where the load benchmark's readings scatter.
// Expect: about 136 B and 1 object per plain ready item, 124 B and 1 object
// per item with `requires` (docs/decisions/019-items-in-memory.md).
// Run: ./node_modules/.bin/bun bench/micro/item-heap.bench.ts [items] (default 1000000)

import { heapStats } from "bun:jsc";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EnqueueItemInput } from "../../src/engine/api.ts";
import { Engine } from "../../src/engine/engine.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { defaultLimits } from "../../src/limits.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import { priorities } from "./support/priorities.ts";

const items = Number(process.argv[2] ?? 1_000_000);
const batchSize = 100;

const dataDir = mkdtempSync(join(tmpdir(), "orq-item-heap-"));
const store = await openLmdbStore({ dataDir, shards: 16, durability: "strict" });
const clock = new ManualClock(1_700_000_000_000);
const writer = new GroupCommitter(store, { clock });
const engine = Engine.recover({ store, writer, limits: defaultLimits, namespaces: {}, nowMs: clock.nowMs() });
const payload = new Uint8Array(100).fill(7);
const noMetadata = new Uint8Array(0);
const nextPriority = priorities("random");

function item(requires: Record<string, unknown> | null): EnqueueItemInput {
  return {
    topic: requires === null ? "plain" : "jupiter",
    priority: nextPriority(),
    payload,
    metadata: noMetadata,
    deliverAtMs: null,
    delayMs: null,
    leaseMs: null,
    ttlMs: null,
    delivery: "at_least_once",
    maxAttempts: 10,
    requires,
    after: null,
    key: null,
  };
}

/** Enqueue `count` items, 8 batches in flight, as connections would. */
async function load(count: number, requiresOf: (n: number) => Record<string, unknown> | null): Promise<void> {
  let pending: Array<Promise<void>> = [];
  for (let n = 0; n < count; n += batchSize) {
    const batch: EnqueueItemInput[] = [];
    for (let i = n; i < Math.min(count, n + batchSize); i++) batch.push(item(requiresOf(i)));
    const r = engine.enqueue("bench", batch, clock.nowMs());
    if (!r.ok) throw new Error(`enqueue: ${r.failure.message}`);
    if (r.value.durable !== null) pending.push(r.value.durable);
    if (pending.length >= 8) {
      await Promise.all(pending);
      pending = [];
    }
  }
  await Promise.all(pending);
}

function reading(): { heapBytes: number; objects: number; rssAnonKiB: number } {
  Bun.gc(true);
  const stats = heapStats();
  const status = readFileSync("/proc/self/status", "utf8");
  const rssAnonKiB = Number((status.match(/RssAnon:\s+(\d+)/) as RegExpMatchArray)[1]);
  return { heapBytes: stats.heapSize, objects: stats.objectCount, rssAnonKiB };
}

function report(label: string, before: ReturnType<typeof reading>, after: ReturnType<typeof reading>, count: number): void {
  const bytes = (after.heapBytes - before.heapBytes) / count;
  const objects = (after.objects - before.objects) / count;
  const anonMiB = (after.rssAnonKiB - before.rssAnonKiB) / 1024;
  console.log(`${label}: ${count} items, JS heap ${bytes.toFixed(1)} B and ${objects.toFixed(2)} objects per item; RssAnon +${anonMiB.toFixed(1)} MiB`);
}

const empty = reading();
await load(items, () => null);
const plain = reading();
report("plain ready items", empty, plain, items);
const signatures = 100;
const kinds = 10;
await load(items, (n) => ({ pool: `p${n % kinds}`, mem_gb: { gte: 8 * Math.floor((n % signatures) / kinds) } }));
report("ready items with requires (100 signatures)", plain, reading(), items);
await store.close();
rmSync(dataDir, { recursive: true, force: true });
