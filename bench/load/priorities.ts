// The priorities the load generator's items carry. A priority queue is used
// with priorities that vary, so every scenario enqueues random priorities
// 0..1000 by default; `--priorities fifo` gives every item priority 0, the
// order in which a queue hands items out as they came in (and in which a
// store that keys items by arrival reads and deletes them in key order).
//
// Random priorities come from a seeded generator, so two runs load the same
// sequence, and from a pool of precomputed batches where a request is a
// template (encoded once): the generator spends no time per item on them.

export const PRIORITY_ORDERS = ["random", "fifo"] as const;
export type PriorityOrder = (typeof PRIORITY_ORDERS)[number];

/** The highest random priority (inclusive): 1,001 levels, as the independent harness used. */
export const PRIORITY_MAX = 1000;
/** Distinct random batches per template shape: enough that no two neighbouring requests repeat an order. */
export const TEMPLATE_POOL = 64;

/** mulberry32: a small seeded PRNG with a full 2^32 period, good enough to spread priorities. */
export class Priorities {
  private state: number;

  constructor(
    readonly order: PriorityOrder,
    seed = 0x5eed,
  ) {
    this.state = seed >>> 0;
  }

  /** The next item's priority. */
  next(): number {
    if (this.order === "fifo") return 0;
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const unit = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return Math.floor(unit * (PRIORITY_MAX + 1));
  }

  /** How many distinct templates a batch shape needs: one in FIFO order. */
  get poolSize(): number {
    return this.order === "fifo" ? 1 : TEMPLATE_POOL;
  }
}
