// The noisy-neighbour scenario: many small tenants share a topic with one
// that floods it. 100 small groups each offer 50 items/s (stamped with their
// send time, open loop: mixed-load.ts with batches of 1, each naming the next
// small group) while consumers take and ack whatever is ready. After a
// warm-up, a window of that load alone; then one more group enqueues
// `floodItems` as fast as it can (batches of 100 on 4 connections, 16 in
// flight each), and the small groups' enqueue-to-delivery delay is read
// again, for every small item sent from the flood's first enqueue until its
// last item is delivered. Both windows are in one run against one server.
//
// Flood and small groups draw their priorities from the same distribution
// (the run's order, priorities.ts: random 0..1000 or all 0), from streams of
// their own. orq rotates between the groups of the best priority; beanstalkd
// (one tube, strict priority) has no groups, so its small tenants' items
// wait behind every flood item ahead of them in priority order.

import { newHistogram, summarize, type LatencySummary } from "./histogram.ts";
import { MixedLoad } from "./mixed-load.ts";
import { runEnqueue, type ThroughputFigures } from "./runners.ts";
import { groupNames, type ProducerShape, type System } from "./systems.ts";

/** The flood's group and the small groups' name prefix. */
export const FLOOD_GROUP = "flood";
export const SMALL_GROUP_PREFIX = "tenant";

/** The flood's enqueue shape: batches of 100 on 4 connections with 16 in flight each, as fast as the server answers. */
const FLOOD_SHAPE = { batch: 100, connections: 4, depth: 16 } as const;
/**
 * The small groups' load: 2 producers, one item per enqueue (each names one
 * group, as a tenant's own client would), at most 256 unanswered each; 2
 * consumers with 8 takes in flight each, deeper than the mixed load's 4 so
 * the flood drains at about the drain scenario's pace.
 */
const SMALL_SHAPE = { batch: 1, producers: 2, consumers: 2, consumerDepth: 8, producerInFlightMax: 256 } as const;
/** How long the consumers may take to catch up with the small groups after the window (10 s). */
const TAIL_MS = 10_000;
/** How often the run checks whether the flood has been delivered (5 ms). */
const POLL_MS = 5;

export interface NoisyOptions {
  /** Items the flooding group enqueues. */
  floodItems: number;
  /** Small groups, and the items/s each offers. */
  groups: number;
  groupItemsPerS: number;
  /** Seconds of small load before the window without the flood. */
  warmupS: number;
  /** Seconds of the window without the flood. */
  aloneS: number;
  /** Longest wait for the flood to be delivered before the run fails. */
  floodTimeoutS: number;
  /** A consumer's take: how many items it asks for and how long it waits (per system, as in the mixed load). */
  takeCount: number;
  waitMs: number;
}

export interface NoisyFigures {
  groups: number;
  groupItemsPerS: number;
  floodItems: number;
  warmupS: number;
  aloneS: number;
  /** The small groups' enqueue-to-delivery delay, items sent in the window without the flood. */
  alone: LatencySummary;
  /** The same, items sent from the flood's first enqueue until its last item was delivered. */
  flood: LatencySummary;
  /** The flood's enqueue, alone in its figures (its items, seconds, items/s). */
  floodEnqueue: ThroughputFigures;
  /** Seconds from the flood's first enqueue to the delivery of its last item. */
  floodS: number;
  floodDelivered: number;
  /** Small items whose enqueue was answered, and small items delivered, over the whole run. */
  smallEnqueued: number;
  smallDelivered: number;
}

/** The flood's priority streams start here, past the small groups' producers (0 and 1). */
const FLOOD_FIRST_STREAM = 100;

/**
 * Runs the scenario against the server `open` opens: once with the small
 * groups' names, once with the flood's one (systems.ts names them on orq's
 * items; beanstalkd ignores them), each with priority streams of its own.
 */
export async function runNoisyNeighbour(
  open: (shape: ProducerShape) => System,
  options: NoisyOptions,
  log: (line: string) => void,
): Promise<NoisyFigures> {
  const aloneHistogram = newHistogram();
  const floodHistogram = newHistogram();
  let aloneStartMs = Number.POSITIVE_INFINITY;
  let aloneEndMs = Number.POSITIVE_INFINITY;
  let floodStartMs = Number.POSITIVE_INFINITY;
  let floodEndMs = Number.POSITIVE_INFINITY;
  let floodItems = Number.POSITIVE_INFINITY;
  let floodDelivered = 0;
  const load = await MixedLoad.open(
    open({ groups: groupNames(SMALL_GROUP_PREFIX, options.groups), firstStream: 0 }),
    { ...SMALL_SHAPE, rateItemsPerS: options.groups * options.groupItemsPerS, takeCount: options.takeCount, waitMs: options.waitMs },
    (delayMs, nowMs) => {
      const sentAtMs = nowMs - delayMs;
      const ns = Math.max(1, Math.round(delayMs * 1e6));
      if (sentAtMs >= floodStartMs) {
        if (sentAtMs <= floodEndMs) floodHistogram.recordValue(ns);
      } else if (sentAtMs >= aloneStartMs && sentAtMs < aloneEndMs) {
        aloneHistogram.recordValue(ns);
      }
    },
    (received, nowMs) => {
      floodDelivered = received;
      if (received >= floodItems && floodEndMs === Number.POSITIVE_INFINITY) floodEndMs = nowMs;
    },
  );
  const startMs = performance.now();
  aloneStartMs = startMs + options.warmupS * 1000;
  aloneEndMs = aloneStartMs + options.aloneS * 1000;
  load.startConsuming();
  const producing = load.produce(startMs, Number.POSITIVE_INFINITY);
  try {
    await Bun.sleep(Math.max(0, aloneEndMs - performance.now()));
    if (load.failure !== null) throw load.failure;

    floodStartMs = performance.now();
    const floodEnqueue = await runEnqueue(open({ groups: [FLOOD_GROUP], firstStream: FLOOD_FIRST_STREAM }), { items: options.floodItems, ...FLOOD_SHAPE });
    floodItems = floodEnqueue.items;
    if (floodDelivered >= floodItems && floodEndMs === Number.POSITIVE_INFINITY) floodEndMs = performance.now();
    log(`noisy neighbour: flood of ${floodItems} enqueued in ${floodEnqueue.seconds.toFixed(2)} s; ${floodDelivered} of them delivered so far`);
    const deadlineMs = performance.now() + options.floodTimeoutS * 1000;
    while (floodEndMs === Number.POSITIVE_INFINITY && load.failure === null) {
      if (performance.now() > deadlineMs) throw new Error(`noisy neighbour: ${floodDelivered} of the flood's ${floodItems} items delivered after ${options.floodTimeoutS} s`);
      await Bun.sleep(POLL_MS);
    }
    load.stopProducing();
    await producing;
    await load.stop(TAIL_MS);
    const floodS = (floodEndMs - floodStartMs) / 1000;
    return {
      groups: options.groups,
      groupItemsPerS: options.groupItemsPerS,
      floodItems,
      warmupS: options.warmupS,
      aloneS: options.aloneS,
      alone: summarize(aloneHistogram),
      flood: summarize(floodHistogram),
      floodEnqueue,
      floodS,
      floodDelivered,
      smallEnqueued: load.enqueued,
      smallDelivered: load.received,
    };
  } catch (error) {
    // Close every connection before the server goes, so no consumer spins on a closed one.
    load.stopProducing();
    await producing;
    await load.stop(0).catch((stopError: Error) => log(`noisy neighbour: closing after the failure: ${stopError.message}`));
    throw error;
  }
}
