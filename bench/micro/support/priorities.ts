// The priorities of the items a micro-benchmark picks or pops. A priority
// queue is used with priorities that vary, so the default is random 0..1000
// (1,001 levels, as the load generator's default), drawn from a seeded
// generator (mulberry32) so two runs build the same heaps; "fifo" gives every
// item priority 0, so arrival order alone decides (the case a bench names
// apart where it measures it).

import { seededRandom } from "../../../test/support/seeded-random.ts";

/** The highest random priority (inclusive). */
export const PRIORITY_MAX = 1000;

export type PriorityOrder = "random" | "fifo";

/** A priority drawn uniformly from 0..PRIORITY_MAX with `random`, for a bench that draws everything from one seeded stream. */
export function randomPriority(random: () => number): number {
  return Math.floor(random() * (PRIORITY_MAX + 1));
}

/** The next item's priority, every call: random 0..PRIORITY_MAX from `seed`, or 0 for "fifo". */
export function priorities(order: PriorityOrder = "random", seed = 0x5eed): () => number {
  if (order === "fifo") return () => 0;
  const random = seededRandom(seed);
  return () => randomPriority(random);
}
