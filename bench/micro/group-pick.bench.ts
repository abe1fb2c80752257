// The matching pick with fairness groups: the in-process time for one worker's
// dequeue to pick the best item it may take when the topic's items name a
// `group`, through the real Engine (MemoryStore + GroupCommitter, 16 shards),
// timed as matching-pick.bench.ts times it. Two shapes, each in ONE topic:
// - "spread": 1,000,000 ready items over 10,000 groups (a random group each,
//   about 100 items a group);
// - "one each": 1,000,000 groups of one item, the worst case for a
//   per-customer key.
// Items carry 100 `requires` signatures and random priorities 0..1000 from
// the run's seeded generator; the dequeues carry the capabilities of the ten
// worker kinds in turn (support/pick-workload.ts, shared with matching-pick).
//
// What is timed: as in matching-pick, first whole `engine.dequeue` calls
// (count 1, per-call capabilities), then, in a second pass of as many calls,
// the methods inside the dequeue that choose the item (pickTiming below: the
// topic's pick, which asks the group rotation), so it is the pick on the
// cold memory a real dequeue meets, without the parse before it or the lease
// after it. Percentiles from a sorted array of every sample, GC included.
//
// Memory per group: an engine over a store that keeps nothing (null-storage.ts,
// so only the engine's own heap counts, as with LMDB, whose records live
// outside it) takes N items, then a full collection and bun:jsc heapStats()
// give its heap size. The same N items (same priorities and requires) in N
// groups, minus them without groups, divided by N, is what a group costs
// beyond its items: its state, its place in the rotation, its name. The
// "spread" shape's difference per group is printed beside it; it also holds
// each item's reference to its group's name, so it is not the target's measure.
//
// Targets (reported, never asserted): pick p50 <= 5 µs and p99 <= 30 µs in
// both shapes; memory per group <= 160 bytes.
//
// Run: ./node_modules/.bin/bun bench/micro/group-pick.bench.ts [--items 1000000] [--groups 10000] [--calls 100000] [--shards 16]
//      [--warmup 10000] [--pass-s 60 (the longest each pass runs)]
//      [--signatures 100 (0: no requires, workers without capabilities: the rotation alone)]
//      [--only spread|one-each|memory] [--json]
// --json ends the output with one line, `group-pick-json {...}`, that bench:load reads (bench/load/group-pick-bound.ts).

import { heapStats } from "bun:jsc";
import { parseArgs } from "node:util";
import { defaultLimits } from "../../src/limits.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import type { DequeueInput, EnqueueItemInput } from "../../src/engine/api.ts";
import { Engine } from "../../src/engine/engine.ts";
import { Topic } from "../../src/engine/ready/topic.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import type { Writer } from "../../src/storage/writer.ts";
import { item } from "../../test/engine/support/item-input.ts";
import { seededRandom } from "../../test/support/seeded-random.ts";
import { nullStorage } from "./null-storage.ts";
import { chooseSignatures, eligibleShares, workerCapabilities } from "./support/pick-workload.ts";
import { percentilesUs, summary, timePick } from "./support/pick-timing.ts";
import { randomPriority } from "./support/priorities.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    items: { type: "string" },
    groups: { type: "string" },
    signatures: { type: "string" },
    calls: { type: "string" },
    warmup: { type: "string" },
    "pass-s": { type: "string" },
    shards: { type: "string" },
    only: { type: "string" },
    "memory-of": { type: "string" },
    json: { type: "boolean", default: false },
  },
});
const count = (text: string | undefined, fallback: number) => (text === undefined ? fallback : Number(text.replaceAll("_", "")));
const itemsTotal = count(values.items, 1_000_000);
const spreadGroups = count(values.groups, 10_000);
const callsPerRun = count(values.calls, 100_000);
const warmupCalls = count(values.warmup, 10_000);
/**
 * The longest a pass (the warm-up, the dequeues, the picks) runs before it
 * stops short of its calls (60 s): a pick that walks every group can take
 * milliseconds, and 100,000 of them would hold a bench:load run for hours.
 * The figures then come from the calls made, and say how many.
 */
const passMsMax = count(values["pass-s"], 60) * 1000;
const shards = count(values.shards, 16);
const only = values.only ?? null;
const ns = "bench";
const topic = "t0";
/** 0: items without requires, workers without capabilities (the rotation's own cost, no matching). */
const signatureCount = count(values.signatures, 100);
/** Items per engine.enqueue call while loading (the contract's items_per_enqueue_max). */
const enqueueBatch = 1000;
/** The seed every shape draws its signatures, priorities and groups from: the same items in each. */
const seed = 51;

/**
 * The engine methods that choose a delivery's item: the same two Topic calls
 * matching-pick times. With groups, pickBest asks the topic's rotation
 * (groups/group-rotation.ts: the least-v group whose best item this worker
 * may take), so the rotation's walk is inside it.
 */
const pickTiming = timePick([
  { owner: Topic.prototype, method: "eligibleGroupCount" },
  { owner: Topic.prototype, method: "pickBest" },
]);

/** How item i names its group: null for none. A fresh string per item, as the server decodes one per item. */
type GroupOf = (index: number, random: () => number) => string | null;
const noGroups: GroupOf = () => null;
const spreadOver =
  (groups: number): GroupOf =>
  (_index, random) =>
    `tenant-${Math.floor(random() * groups)}`;
const oneEach: GroupOf = (index) => `tenant-${index}`;

/** Loads `itemsTotal` items into one topic: the same seeded priorities and requires for every GroupOf. */
async function load(engine: Engine, writer: Writer, groupOf: GroupOf, nowMs: number): Promise<void> {
  const random = seededRandom(seed);
  const signatures = chooseSignatures(signatureCount, random);
  const groupRandom = seededRandom(seed + 1);
  for (let first = 0; first < itemsTotal; first += enqueueBatch) {
    const batch: EnqueueItemInput[] = [];
    for (let i = first; i < Math.min(itemsTotal, first + enqueueBatch); i++) {
      const requires = signatureCount === 0 ? null : (signatures[Math.floor(random() * signatureCount)] as Record<string, unknown>);
      batch.push(item(topic, { priority: randomPriority(random), requires, group: groupOf(i, groupRandom) }));
    }
    const result = engine.enqueue(ns, batch, nowMs);
    if (!result.ok) throw new Error(`enqueue failed: ${result.failure.message}`);
    if ((first / enqueueBatch) % 20 === 19) await result.value.durable;
  }
  await writer.drain();
}

interface ShapeFigures {
  shape: string;
  items: number;
  groups: number;
  /** Share of the timed dequeues that delivered an item. */
  deliveredShare: number;
  /** Dequeues timed whole, and dequeues whose pick was timed (fewer than --calls when a pass ran out of time). */
  dequeues: number;
  picks: number;
  dequeue: ReturnType<typeof percentilesUs>;
  pick: ReturnType<typeof percentilesUs>;
}

async function runShape(shape: string, groups: number, groupOf: GroupOf): Promise<ShapeFigures> {
  const clock = new ManualClock();
  const store = new MemoryStore({ shards });
  const writer = new GroupCommitter(store, { clock });
  const engine = Engine.recover({ store, writer, limits: defaultLimits, namespaces: {}, nowMs: clock.nowMs() });
  const loadStartedMs = performance.now();
  await load(engine, writer, groupOf, clock.nowMs());
  const loadMs = performance.now() - loadStartedMs;

  const kinds = signatureCount === 0 ? [null] : workerCapabilities;
  const inputs: DequeueInput[] = kinds.map((capabilities) => ({ topics: [{ topic, count: 1 }], capabilities, waitMs: 0, leaseMs: null, owner: 1 }));
  let turn = 0;
  let delivered = 0;
  /** Calls an item, for splitting the pick's samples into those that found one and those that found none. */
  const call = (): number => {
    const result = engine.dequeue(ns, inputs[turn++ % inputs.length] as DequeueInput, clock.nowMs());
    if (!result.ok || result.kind !== "done") throw new Error("dequeue failed");
    delivered += result.deliveries.length;
    return result.deliveries.length;
  };

  /** Runs `step(i)` for i = 0 .. calls-1, committing every 1,024, until passMsMax has gone by; returns how many ran. */
  const pass = async (calls: number, step: (i: number) => void): Promise<number> => {
    const deadlineMs = performance.now() + passMsMax;
    let i = 0;
    while (i < calls) {
      step(i);
      i++;
      if ((i & 1023) === 0) await writer.drain();
      if ((i & 63) === 0 && performance.now() > deadlineMs) break;
    }
    await writer.drain();
    return i;
  };

  // Warm-up, as matching-pick's: every kind once (its first call counts what it may take), then 10,000 plain calls.
  const warmed = await pass(warmupCalls + inputs.length, () => void call());

  const timed = new Float64Array(callsPerRun);
  delivered = 0;
  const dequeues = await pass(callsPerRun, (i) => {
    const started = Bun.nanoseconds();
    call();
    timed[i] = Bun.nanoseconds() - started;
  });
  const deliveredShare = delivered / dequeues;
  const samples = timed.slice(0, dequeues).sort();

  const pickTimed = new Float64Array(callsPerRun);
  const found = new Uint8Array(callsPerRun);
  const observedBefore = pickTiming.observed;
  pickTiming.samples = pickTimed;
  const picks = await pass(callsPerRun, (i) => {
    pickTiming.call = i;
    found[i] = call();
  });
  pickTiming.samples = null;
  if (pickTiming.observed === observedBefore) throw new Error("group pick: no timed pick method ran inside the dequeues");
  const pickSamples = pickTimed.slice(0, picks);
  // The picks that found an item and those that found none, apart: a worker that may take nothing left can cost a whole walk.
  const hits = pickSamples.filter((_, i) => found[i] === 1).sort();
  const misses = pickSamples.filter((_, i) => found[i] === 0).sort();
  pickSamples.sort();
  const cut = (ran: number, of: number) => (ran < of ? ` (stopped after ${passMsMax / 1000} s: ${ran.toLocaleString()} of ${of.toLocaleString()})` : "");

  console.log(
    [
      `${shape}: ${itemsTotal.toLocaleString()} items in ${groups.toLocaleString()} groups, one topic, ${signatureCount} signatures, ${shards} shards (load ${(loadMs / 1000).toFixed(1)} s)`,
      signatureCount === 0 ? "  no requires, workers without capabilities" : `  eligible share per kind: ${eligibleShares(chooseSignatures(signatureCount, seededRandom(seed))).map((s) => s.toFixed(2)).join(" ")}`,
      `  warm-up ${warmed.toLocaleString()} calls${cut(warmed, warmupCalls + inputs.length)}`,
      `  dequeue (pick + lease, per-call capabilities), ${dequeues.toLocaleString()} calls${cut(dequeues, callsPerRun)}, ${(deliveredShare * 100).toFixed(1)}% delivered an item:`,
      `    ${summary(samples)}`,
      `  pick (inside the dequeue), ${picks.toLocaleString()} more calls${cut(picks, callsPerRun)}:`,
      `    ${summary(pickSamples)}`,
      ...[["that found an item", hits] as const, ["that found none", misses] as const]
        .filter(([, part]) => part.length > 0)
        .map(([what, part]) => `    the ${part.length.toLocaleString()} ${what}: ${summary(part)}`),
    ].join("\n"),
  );
  return { shape, items: itemsTotal, groups, deliveredShare, dequeues, picks, dequeue: percentilesUs(samples), pick: percentilesUs(pickSamples) };
}

/** The engine's heap with `itemsTotal` items loaded by `groupOf`: heapStats().heapSize after a full collection, less the same before the load. */
async function engineHeapBytes(groupOf: GroupOf): Promise<number> {
  Bun.gc(true);
  const before = heapStats().heapSize;
  const { store, writer } = nullStorage(shards);
  const clock = new ManualClock();
  const engine = Engine.recover({ store, writer, limits: defaultLimits, namespaces: {}, nowMs: clock.nowMs() });
  await load(engine, writer, groupOf, clock.nowMs());
  Bun.gc(true);
  const after = heapStats().heapSize;
  // Used after the reading, so the engine is live through the collection above.
  if (engine.nextDeadlineMs() === -1) throw new Error("unreachable");
  return after - before;
}

const memoryShapes: Record<string, GroupOf> = { none: noGroups, "one-each": oneEach, spread: spreadOver(spreadGroups) };

/**
 * engineHeapBytes of one shape, in a process of its own: in one process an
 * engine let go of was not all collected before the next one's reading
 * (conservative stack scanning keeps what a register still points to), so
 * the second reading came out near zero.
 */
async function heapBytesInChild(shape: string): Promise<number> {
  const argv = [process.execPath, import.meta.path, "--memory-of", shape, "--items", String(itemsTotal), "--groups", String(spreadGroups), "--shards", String(shards)];
  const child = Bun.spawn(argv, { stdout: "pipe", stderr: "inherit" });
  const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  const match = /^memory-bytes (-?\d+)$/m.exec(out);
  if (code !== 0 || match === null) throw new Error(`group pick: the memory reading of "${shape}" failed (exit ${code}): ${out.slice(-500)}`);
  return Number(match[1]);
}

interface MemoryFigures {
  items: number;
  withoutGroupsBytes: number;
  oneEachBytes: number;
  /** (oneEachBytes - withoutGroupsBytes) / items: the target's measure. */
  perGroupBytes: number;
  spreadGroups: number;
  spreadBytes: number;
  /** (spreadBytes - withoutGroupsBytes) / spreadGroups: with each item's reference to its group in it. */
  perSpreadGroupBytes: number;
}

async function measureMemory(): Promise<MemoryFigures> {
  const withoutGroupsBytes = await heapBytesInChild("none");
  const oneEachBytes = await heapBytesInChild("one-each");
  const spreadBytes = await heapBytesInChild("spread");
  const figures = {
    items: itemsTotal,
    withoutGroupsBytes,
    oneEachBytes,
    perGroupBytes: (oneEachBytes - withoutGroupsBytes) / itemsTotal,
    spreadGroups,
    spreadBytes,
    perSpreadGroupBytes: (spreadBytes - withoutGroupsBytes) / spreadGroups,
  };
  const mib = (bytes: number) => (bytes / 1048576).toFixed(1);
  console.log(
    [
      `memory (engine heap after a full collection, ${itemsTotal.toLocaleString()} items): without groups ${mib(withoutGroupsBytes)} MiB, ` +
        `in ${itemsTotal.toLocaleString()} groups ${mib(oneEachBytes)} MiB, in ${spreadGroups.toLocaleString()} groups ${mib(spreadBytes)} MiB`,
      `  per group beyond its items (groups of one): ${figures.perGroupBytes.toFixed(1)} B (target <= 160 B)`,
      `  per group, ${spreadGroups.toLocaleString()} groups (each item's reference to its group included): ${figures.perSpreadGroupBytes.toFixed(1)} B`,
    ].join("\n"),
  );
  return figures;
}

async function main(): Promise<void> {
  const memoryOf = values["memory-of"];
  if (memoryOf !== undefined) {
    const groupOf = memoryShapes[memoryOf];
    if (groupOf === undefined) throw new Error(`--memory-of: one of ${Object.keys(memoryShapes).join(", ")}`);
    console.log(`memory-bytes ${await engineHeapBytes(groupOf)}`);
    return;
  }
  const shapes: ShapeFigures[] = [];
  if (only === null || only === "spread") shapes.push(await runShape("spread", spreadGroups, spreadOver(spreadGroups)));
  Bun.gc(true);
  if (only === null || only === "one-each") shapes.push(await runShape("one each", itemsTotal, oneEach));
  Bun.gc(true);
  const memory = only === null || only === "memory" ? await measureMemory() : null;
  if (values.json === true) console.log(`group-pick-json ${JSON.stringify({ items: itemsTotal, signatures: signatureCount, shards, calls: callsPerRun, shapes, memory })}`);
}

await main();
