// Matching's building blocks: satisfies() per constraint form, parsing a
// worker's capabilities (done on every dequeue that sends them), the worker
// kind lookup, cached eligibility over 10 / 100 / 1,000 signatures, and the
// first-time evaluation of a new worker kind against 1,000 signatures with and
// without the feature index.
//
// Expected on the 2-core build machine (Bun 1.4.5, busy and quiet; read
// ratios): satisfies() 16-50 ns per form, 80-92 ns for three features;
// parseCapabilities() of 5 features 0.45-0.9 µs; workerKind() hit and
// isEligible() hit 6-8 ns each; a cached pass over N signatures about 6.5-7
// ns per signature; eligibleAll() cached 20-200 ns. A new kind against 1,000
// random signatures 100-150 µs with or without the index (8 shared features:
// little to prune); against 1,000 signatures on distinct pool features 2-4 µs
// with the index vs 80-160 µs without.
// Choosing the heap to pop with 1M items over 1,000 topics (cold memory;
// random priorities 0..1000, seeded), at 10 / 100 / 1,000 signatures:
// scanning eligible groups' shard heaps 0.5-2 / 12-35 / 35-85 µs; one top per
// group (an idealized per-group tournament, one object hop) 0.03-0.04 /
// 0.6-1.2 / 6-7.6 µs; TopsHeap.best (skipping topics with nothing eligible)
// 0.24-0.6 / 0.6-2.4 / 0.8-3 µs.
// Run: ./node_modules/.bin/bun bench/micro/matcher.bench.ts [--items 1000000 (the pick's items over 1,000 topics)]

import { bench, do_not_optimize, group, run, summary } from "mitata";
import { defaultLimits } from "../../src/limits.ts";
import {
  Matcher,
  parseCapabilities,
  parseRequires,
  satisfies,
  SignatureRegistry,
  type Capabilities,
  type Requires,
} from "../../src/engine/matching/index.ts";
import { TopsHeap } from "../../src/engine/matching/index.ts";
import { PairingHeap } from "../../src/lib/pairing-heap.ts";
import { randomCapabilities, randomRequires } from "../../test/engine/matching/random-corpus.ts";
import { seededRandom } from "../../test/support/seeded-random.ts";
import { randomPriority } from "./support/priorities.ts";

const itemsAt = process.argv.indexOf("--items");
/** Items the pick benchmarks spread over 1,000 topics. */
const pickItems = itemsAt >= 0 ? Number(process.argv[itemsAt + 1]) : 1_000_000;

function requires(raw: unknown): Requires {
  const parsed = parseRequires(raw, defaultLimits);
  if (!parsed.ok || parsed.value === null) throw new Error(`bad requires ${JSON.stringify(raw)}`);
  return parsed.value;
}

function caps(raw: unknown): Capabilities {
  const parsed = parseCapabilities(raw, defaultLimits);
  if (!parsed.ok || parsed.value === null) throw new Error("bad capabilities");
  return parsed.value;
}

const workerRaw = { os: "linux", arch: "x86", gpu: ["a100", "t4"], mem: 64, zone: "eu-1" };
const worker = caps(workerRaw);

group("satisfies() per constraint form (worker with 5 features)", () => {
  summary(() => {
    const forms: Array<[string, Requires]> = [
      ["scalar", requires({ os: "linux" })],
      ["scalar in a set", requires({ gpu: "t4" })],
      ["in", requires({ zone: { in: ["eu-1", "eu-2", "us-1"] } })],
      ["all", requires({ gpu: { all: ["a100", "t4"] } })],
      ["range", requires({ mem: { gte: 32, lt: 128 } })],
      ["ne", requires({ zone: { ne: "us-1" } })],
      ["exists", requires({ gpu: { exists: true } })],
      ["missing feature", requires({ fpga: "x" })],
      ["3 features", requires({ os: "linux", gpu: "a100", mem: { gte: 32 } })],
    ];
    for (const [name, form] of forms) bench(name, () => do_not_optimize(satisfies(form, worker)));
  });
});

group("per-dequeue work", () => {
  const registry = new SignatureRegistry();
  const matcher = new Matcher(registry);
  const kind = matcher.workerKind(worker);
  const id = registry.intern(requires({ os: "linux" }));
  matcher.isEligible(kind, id);
  bench("parseCapabilities (5 features, keys sorted)", () =>
    do_not_optimize(parseCapabilities({ arch: "x86", gpu: ["a100", "t4"], mem: 64, os: "linux", zone: "eu-1" }, defaultLimits)),
  );
  bench("parseCapabilities (5 features, keys unsorted)", () =>
    do_not_optimize(parseCapabilities({ os: "linux", arch: "x86", gpu: ["t4", "a100"], mem: 64, zone: "eu-1" }, defaultLimits)),
  );
  bench("workerKind (hit)", () => do_not_optimize(matcher.workerKind(worker)));
  bench("isEligible (cached)", () => do_not_optimize(matcher.isEligible(kind, id)));
});

function randomSetup(signatureCount: number, seed: number) {
  const random = seededRandom(seed);
  const registry = new SignatureRegistry();
  const ids: number[] = [];
  while (registry.size < signatureCount) {
    const parsed = parseRequires(randomRequires(random, 4), defaultLimits);
    if (!parsed.ok || parsed.value === null) continue;
    const before = registry.size;
    const id = registry.intern(parsed.value);
    if (registry.size > before) ids.push(id);
  }
  const workers = Array.from({ length: 10 }, () => caps({ ...randomCapabilities(random), os: "linux" }));
  return { registry, ids, workers };
}

group("cached eligibility over N signatures (10 worker kinds)", () => {
  summary(() => {
    for (const count of [10, 100, 1000]) {
      const { registry, ids, workers } = randomSetup(count, count);
      const matcher = new Matcher(registry);
      const kinds = workers.map((w) => matcher.workerKind(w));
      for (const kind of kinds) matcher.eligibleSignatures(kind, ids);
      let turn = 0;
      bench(`isEligible x ${count}`, () => {
        const kind = kinds[turn++ % kinds.length] as number;
        let eligible = 0;
        for (let i = 0; i < ids.length; i++) if (matcher.isEligible(kind, ids[i] as number)) eligible++;
        return eligible;
      });
      bench(`eligibleAll (cached) at ${count}`, () => do_not_optimize(matcher.eligibleAll(kinds[turn++ % kinds.length] as number)));
    }
  });
});

/** Distinct capability sets, one per call, so every workerKind() is a miss (workerKindsMax 1: eviction is free). */
function firstTimeBench(name: string, registry: SignatureRegistry, workerCaps: Capabilities[], featureIndex: boolean): void {
  const matcher = new Matcher(registry, { workerKindsMax: 1, featureIndex });
  let turn = 0;
  bench(name, () => {
    const kind = matcher.workerKind(workerCaps[turn++ % workerCaps.length] as Capabilities);
    return matcher.eligibleAll(kind).length;
  });
}

group("first-time evaluation of a new kind against 1,000 signatures", () => {
  summary(() => {
    const { registry, workers } = randomSetup(1000, 99);
    // Make each worker distinct so it is a new kind every call.
    const distinct = Array.from({ length: 1000 }, (_, i) => {
      const base = workers[i % workers.length] as Capabilities;
      const raw: Record<string, unknown> = { serial: i };
      for (const [feature, values] of base.features) raw[feature] = [...values];
      return caps(raw);
    });
    firstTimeBench("random corpus, feature index", registry, distinct, true);
    firstTimeBench("random corpus, no index", registry, distinct, false);

    // A fleet of dedicated pools: each signature needs its own pool feature; each worker has one or two.
    const pools = new SignatureRegistry();
    for (let i = 0; i < 1000; i++) pools.intern(requires({ [`pool-${i}`]: true, os: "linux" }));
    const poolWorkers = Array.from({ length: 1000 }, (_, i) => caps({ [`pool-${i}`]: true, [`pool-${(i * 7) % 1000}`]: true, os: "linux", serial: i }));
    firstTimeBench("pool corpus, feature index", pools, poolWorkers, true);
    firstTimeBench("pool corpus, no index", pools, poolWorkers, false);
  });
});

/**
 * Choosing which heap to pop: 1,000,000 ready items over 1,000 topics, one heap
 * per (signature, shard) of a topic as the engine keeps them, 16 shards, 10
 * worker kinds. "scan" peeks every eligible group's shard heaps (the engine's
 * first design); "tops heap" walks a TopsHeap best-first. Topics are visited
 * at random, so like a real server most of a topic's memory is cold.
 */
type BenchItem = { record: { priority: number; deliverAtMs: number }; key: number };
const benchLess = (a: BenchItem, b: BenchItem) =>
  a.record.priority !== b.record.priority
    ? a.record.priority < b.record.priority
    : a.record.deliverAtMs !== b.record.deliverAtMs
      ? a.record.deliverAtMs < b.record.deliverAtMs
      : a.key < b.key;
type BenchGroup = {
  signatureId: number;
  readyCount: number;
  heaps: Array<PairingHeap<BenchItem> | undefined>;
  /** The group's best item over its shards (what a per-group tournament of shard tops yields). */
  top: BenchItem | null;
};

function pickSetup(signatureCount: number) {
  const random = seededRandom(signatureCount + 1);
  const { registry, ids, workers } = randomSetup(signatureCount, signatureCount + 2);
  const matcher = new Matcher(registry);
  const kinds = workers.map((w) => matcher.workerKind(w));
  const shardCount = 16;
  const topics: Array<{ eligible: BenchGroup[][]; tops: TopsHeap; groupCount: number }> = [];
  let key = 0;
  for (let t = 0; t < 1000; t++) {
    const groups = new Map<number, BenchGroup>();
    for (let i = 0; i < pickItems / 1000; i++) {
      const signatureId = ids[Math.floor(random() * ids.length)] as number;
      const shard = Math.floor(random() * shardCount);
      let group = groups.get(signatureId);
      if (group === undefined) {
        group = { signatureId, readyCount: 0, heaps: [], top: null };
        groups.set(signatureId, group);
      }
      let heap = group.heaps[shard];
      if (heap === undefined) {
        heap = new PairingHeap<BenchItem>(benchLess);
        group.heaps[shard] = heap;
      }
      const item = { record: { priority: randomPriority(random), deliverAtMs: 1_700_000_000_000 }, key: key++ };
      heap.insert(item);
      if (group.top === null || benchLess(item, group.top)) group.top = item;
      group.readyCount++;
    }
    const tops = new TopsHeap();
    for (const group of groups.values()) {
      for (let shard = 0; shard < group.heaps.length; shard++) {
        const top = group.heaps[shard]?.peek();
        if (top === undefined) continue;
        tops.setTop(tops.addEntry(group.signatureId, shard), top.record.priority, top.record.deliverAtMs, top.key);
      }
    }
    const eligible = kinds.map((kind) => [...groups.values()].filter((g) => matcher.isEligible(kind, g.signatureId)));
    topics.push({ eligible, tops, groupCount: groups.size });
  }
  return { matcher, kinds, topics, shardOk: new Uint8Array(shardCount).fill(1) };
}

function scanPick(groups: readonly BenchGroup[], shardOk: Uint8Array): BenchItem | null {
  let best: BenchItem | null = null;
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g] as BenchGroup;
    if (group.readyCount === 0) continue;
    const heaps = group.heaps;
    for (let s = 0; s < heaps.length; s++) {
      const heap = heaps[s];
      if (heap === undefined || heap.size === 0 || shardOk[s] !== 1) continue;
      const top = heap.peek() as BenchItem;
      if (best === null || benchLess(top, best)) best = top;
    }
  }
  return best;
}

for (const signatureCount of [10, 100, 1000]) {
  group(`pick the best eligible heap: ${pickItems.toLocaleString("en-US")} items (random priorities 0..1000), 1,000 topics, ${signatureCount} signatures, 16 shards`, () => {
    summary(() => {
      const setup = pickSetup(signatureCount);
      const random = seededRandom(5);
      const picks = Array.from({ length: 65536 }, () => [Math.floor(random() * 1000), Math.floor(random() * 10)] as const);
      let turn = 0;
      bench("scan eligible groups x shard heaps", () => {
        const [t, k] = picks[turn++ & 65535] as readonly [number, number];
        const topic = setup.topics[t] as { eligible: BenchGroup[][] };
        return scanPick(topic.eligible[k] as BenchGroup[], setup.shardOk);
      });
      bench("scan eligible groups, one top each (per-group tournament)", () => {
        const [t, k] = picks[turn++ & 65535] as readonly [number, number];
        const groups = (setup.topics[t] as { eligible: BenchGroup[][] }).eligible[k] as BenchGroup[];
        let best: BenchItem | null = null;
        for (let g = 0; g < groups.length; g++) {
          const top = (groups[g] as BenchGroup).top;
          if (top !== null && (best === null || benchLess(top, best))) best = top;
        }
        return best;
      });
      bench("TopsHeap.best", () => {
        const [t, k] = picks[turn++ & 65535] as readonly [number, number];
        const topic = setup.topics[t] as { tops: TopsHeap };
        return topic.tops.best(setup.matcher, setup.kinds[k] as number, setup.shardOk);
      });
      // What the engine should do: skip a topic where the kind may take no group (the walk would visit every entry).
      bench("TopsHeap.best, skipping topics with nothing eligible", () => {
        const [t, k] = picks[turn++ & 65535] as readonly [number, number];
        const topic = setup.topics[t] as { eligible: BenchGroup[][]; tops: TopsHeap };
        if ((topic.eligible[k] as BenchGroup[]).length === 0) return -1;
        return topic.tops.best(setup.matcher, setup.kinds[k] as number, setup.shardOk);
      });
    });
  });
}

await run();
