// Flags of `npm run bench:load` and the sizes they select. --quick shrinks
// every size so the smoke test runs the whole suite in seconds.

import { parseArgs } from "node:util";
import { PRIORITY_ORDERS, type PriorityOrder } from "./priorities.ts";

export const SCENARIOS = ["enqueue", "drain", "mixed", "latency", "memory", "jupiter", "noisy", "capped", "pick", "locality", "waits"] as const;
export type Scenario = (typeof SCENARIOS)[number];
export const SYSTEMS = ["orq", "orq-beanstalk", "beanstalkd", "floor"] as const;
export type SystemName = (typeof SYSTEMS)[number];
/**
 * The scenarios a second priority order (after the first of --priorities)
 * repeats: the drain and the matched acquisitions are where delivery order
 * changes the work; enqueue, memory and latency are read in the first order.
 * The noisy neighbour and the capped drain too: with every item at priority 0
 * the rotation between groups alone decides who goes next, where random
 * priorities put a small tenant's item behind every flood item of a better
 * priority, in orq as in beanstalkd.
 */
export const SECOND_ORDER_SCENARIOS: ReadonlySet<Scenario> = new Set<Scenario>(["drain", "jupiter", "noisy", "capped"]);

export interface LoadOptions {
  quick: boolean;
  only: Set<Scenario>;
  systems: Set<SystemName>;
  /** Items for batch-100 enqueue runs, drain, memory and the ready backlog of the latency run. */
  items: number;
  /** Items for batch-1 enqueue runs (a rate needs fewer samples than a backlog does). */
  itemsSingle: number;
  /** Items for beanstalkd's fsync-every-write runs (about 7.5 k/s). */
  itemsFsyncAlways: number;
  durationS: number;
  /**
   * Seconds the memory scenario leaves the server idle before its second
   * reading. 15 s: after a 1,000,000-item load orq's heap came down 1.5-10 s
   * into the quiet (JavaScriptCore's own collection, or the idle GC hint at
   * 1-2 s), and when it had not, the idle GC's full collection at 11-12 s
   * took it down; a 3 s reading still caught most runs half-way.
   */
  idleS: number;
  rateItemsPerS: number;
  latencySamples: number;
  latencyWarmup: number;
  depth: number;
  drainConnections: number;
  drainDepth: number;
  /** Jupiter scenario (orq only, bench/load/jupiter.ts): backlog items over 100 signatures, longest acquisition run, ping-ceiling run. */
  jupiterItems: number;
  jupiterDurationS: number;
  jupiterPingS: number;
  /** Items of the in-process bound beside it (bench/micro/acquisition-path.bench.ts, relaxed; jupiter-bound.ts). */
  jupiterInProcessItems: number;
  /**
   * Locality (orq's durable modes, locality.ts): items kept ready through
   * the window, and the window of each of its two passes (with `prefers`,
   * then without).
   */
  localityBacklog: number;
  localityDurationS: number;
  /** Noisy neighbour (noisy-neighbour.ts): the flood's items, the small groups and each one's items/s, the warm-up and the window without the flood. */
  floodItems: number;
  noisyGroups: number;
  noisyGroupItemsPerS: number;
  noisyWarmupS: number;
  noisyAloneS: number;
  /**
   * The in-process group pick (group-pick-bound.ts): items, the groups they
   * spread over, timed calls per pass, warm-up calls, the longest a pass
   * runs. The preference pick beside it (preference-pick-bound.ts) takes the
   * same sizes, without the groups.
   */
  pickItems: number;
  pickGroups: number;
  pickCalls: number;
  pickWarmup: number;
  pickPassS: number;
  /**
   * The in-process cost of `wait` and ack results (waits-cost-bound.ts): waits
   * parked at once (item_waits_total_max, 100,000), the connections they come
   * from (100: 1,000 each, item_waits_per_connection_max), items acked per
   * result size.
   */
  waitsParked: number;
  waitsOwners: number;
  waitsResultItems: number;
  /** orq modes to run (--orq-modes; default all): strict and relaxed durability on LMDB, and `memory` (`--store memory`, Jupiter and latency only). */
  orqModes: Set<"strict" | "relaxed" | "memory">;
  /**
   * Priority orders (--priorities), first one first: every scenario runs in
   * the first; a second repeats SECOND_ORDER_SCENARIOS, its results labelled
   * with the order ("orq strict fifo"). Default random, then fifo.
   */
  priorities: PriorityOrder[];
  out: string | null;
  keep: boolean;
}

const HELP = `bun bench/load/main.ts [flags]
  --quick            tiny sizes (smoke test)
  --only LIST        scenarios, comma-separated: ${SCENARIOS.join(",")}
  --systems LIST     systems, comma-separated: ${SYSTEMS.join(",")}
  --items N          backlog and batch-100 enqueue items (default 1000000)
  --items-single N   batch-1 enqueue items (default 200000)
  --duration S       mixed-load duration in seconds (default 30)
  --rate N           mixed-load offered items/s (default 20000)
  --idle S           idle seconds before the second memory reading (default 15)
  --samples N        latency samples per op (default 20000)
  --jupiter-items N  Jupiter scenario backlog over 100 signatures (default 300000)
  --jupiter-duration S  longest Jupiter acquisition run in seconds (default 15)
  --locality-backlog N  locality: items kept ready through the stream (default 1000); 10 repositories, prefer_wait_ms 50
  --locality-duration S  locality: seconds of each pass, with prefers and without (default 3)
  --flood-items N    noisy neighbour: the flooding group's items (default 1000000); 100 small groups offer 50 items/s each
  --pick-items N     in-process picks: ready items, over 10,000 groups and in groups of one, and with preferences (default 1000000)
  --waits N          in-process wait cost: waits parked at once over 100 connections (default 100000)
  --result-items N   in-process result cost: items acked per result size (default 100000)
  --orq-modes LIST   orq modes: strict,relaxed,memory (default all; memory is
                     --store memory, Jupiter and latency scenarios only)
  --priorities LIST  item priority orders, first one in full: random (0..1000, seeded), fifo (all 0);
                     a second order repeats drain and jupiter only (default random,fifo)
  --out PATH         JSON output (default .bench-out/load-<timestamp>.json)
  --keep             keep the temp data dirs`;

function parseList<T extends string>(text: string | undefined, allowed: readonly T[], flag: string): Set<T> {
  if (text === undefined) return new Set(allowed);
  const out = new Set<T>();
  for (const part of text.split(",")) {
    const name = part.trim() as T;
    if (!allowed.includes(name)) throw new Error(`${flag}: unknown "${part}" (allowed: ${allowed.join(", ")})`);
    out.add(name);
  }
  return out;
}

function parseCount(text: string | undefined, fallback: number, flag: string): number {
  if (text === undefined) return fallback;
  const value = Number(text.replaceAll("_", "").replaceAll(",", ""));
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${flag}: expected a positive number, got "${text}"`);
  return value;
}

export function parseOptions(argv: string[]): LoadOptions | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      systems: { type: "string" },
      items: { type: "string" },
      "items-single": { type: "string" },
      duration: { type: "string" },
      rate: { type: "string" },
      idle: { type: "string" },
      samples: { type: "string" },
      "jupiter-items": { type: "string" },
      "jupiter-duration": { type: "string" },
      "locality-backlog": { type: "string" },
      "locality-duration": { type: "string" },
      "flood-items": { type: "string" },
      "pick-items": { type: "string" },
      waits: { type: "string" },
      "result-items": { type: "string" },
      "orq-modes": { type: "string" },
      priorities: { type: "string" },
      out: { type: "string" },
      keep: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help === true) {
    console.log(HELP);
    return null;
  }
  const quick = values.quick === true;
  const items = parseCount(values.items, quick ? 2000 : 1_000_000, "--items");
  const pickItems = parseCount(values["pick-items"], quick ? 5000 : 1_000_000, "--pick-items");
  return {
    quick,
    only: parseList(values.only, SCENARIOS, "--only"),
    systems: parseList(values.systems, SYSTEMS, "--systems"),
    items,
    itemsSingle: parseCount(values["items-single"], Math.min(items, quick ? 1000 : 200_000), "--items-single"),
    itemsFsyncAlways: Math.min(items, quick ? 100 : 10_000),
    durationS: parseCount(values.duration, quick ? 2 : 30, "--duration"),
    idleS: parseCount(values.idle, quick ? 0.2 : 15, "--idle"),
    rateItemsPerS: parseCount(values.rate, quick ? 2000 : 20_000, "--rate"),
    latencySamples: parseCount(values.samples, quick ? 100 : 20_000, "--samples"),
    latencyWarmup: quick ? 10 : 2000,
    depth: 64,
    drainConnections: 2,
    drainDepth: 16,
    jupiterItems: parseCount(values["jupiter-items"], quick ? 2000 : 300_000, "--jupiter-items"),
    jupiterDurationS: parseCount(values["jupiter-duration"], quick ? 1 : 15, "--jupiter-duration"),
    jupiterPingS: quick ? 0.3 : 3,
    // The acquisition-path bench needs more than its 25 rounds of 320.
    jupiterInProcessItems: quick ? 20_000 : 100_000,
    // At the stream's rate (tens of thousands a second) 1,000 ready is well under the 50 ms of acquisitions an item waits for its repository.
    localityBacklog: parseCount(values["locality-backlog"], quick ? 300 : 1000, "--locality-backlog"),
    localityDurationS: parseCount(values["locality-duration"], quick ? 0.5 : 3, "--locality-duration"),
    // --quick's flood is 20,000: a tenth of a second or more of flood, so its window holds hundreds of small items.
    floodItems: parseCount(values["flood-items"], quick ? 20_000 : 1_000_000, "--flood-items"),
    noisyGroups: 100,
    noisyGroupItemsPerS: 50,
    noisyWarmupS: quick ? 0.5 : 5,
    noisyAloneS: quick ? 1 : 10,
    pickItems,
    // 100 items a group (10,000 groups for 1,000,000 items), at any size.
    pickGroups: Math.max(1, Math.round(pickItems / 100)),
    pickCalls: quick ? 500 : 100_000,
    pickWarmup: quick ? 500 : 10_000,
    pickPassS: quick ? 3 : 60,
    waitsParked: parseCount(values.waits, quick ? 2000 : 100_000, "--waits"),
    waitsOwners: 100,
    waitsResultItems: parseCount(values["result-items"], quick ? 2000 : 100_000, "--result-items"),
    orqModes: parseList(values["orq-modes"], ["strict", "relaxed", "memory"] as const, "--orq-modes"),
    // A list in the order given (a Set keeps insertion order): the first runs in full.
    priorities: [...parseList(values.priorities, PRIORITY_ORDERS, "--priorities")],
    out: values.out ?? null,
    keep: values.keep === true,
  };
}
