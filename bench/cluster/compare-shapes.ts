// What the PostgreSQL comparison measures, shared by every system's runner:
// the two shape pairs (batched: enqueue 100 per call, then drain in batches;
// single: enqueue one per call, then drain one at a time), the producers'
// loop, the ledger that checks every item was processed exactly once, and
// the two phases a session runs (a warm-up, then the timed run).
// Each item carries its index (0..items-1) in its payload, so the ledger
// counts by index, not by the system's own ids.

/** batched: enqueue 100 per call, drain in batches. single: one per call each way. */
export type ShapePair = "batched" | "single";
export const SHAPE_PAIRS: readonly ShapePair[] = ["batched", "single"];

/** Items per enqueue call, and per fetch, in the batched pair. */
export const BATCH_ITEMS = 100;
/** Concurrent producers, and concurrent consumers where the system takes a count. */
export const LOOPS = 8;
/** Bytes of padding that make each item's payload about 100 bytes. */
export const PAYLOAD_BYTES = 100;

/** One pair's figures for one system. */
export interface PairResult {
  items: number;
  enqueuePerS: number;
  drainPerS: number;
  /** WAL the whole PostgreSQL cluster wrote from before the enqueue to after the drain, per item. */
  walBytesPerItem: number;
  /** Items processed (acked, completed) in all, counting repeats. */
  processed: number;
  /** Distinct items processed. */
  distinct: number;
  /** Items processed more than once. */
  duplicates: number;
}

/** Counts, per item index, how often the system handed an item to its consumer and had it completed. */
export class ProcessedLedger {
  private readonly counts: Uint16Array;
  /** Items processed in all, counting repeats. */
  processed = 0;
  /** Items processed at least once. */
  distinct = 0;
  /** Items processed more than once. */
  duplicates = 0;
  /**
   * performance.now() when the last missing item was processed: a drain ends
   * there, not when its consumer loops have returned from their last (empty)
   * fetch, which would add a wait that is the loop's, not the system's.
   */
  doneAtMs: number | null = null;

  constructor(readonly items: number) {
    this.counts = new Uint16Array(items);
  }

  record(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.items) throw new Error(`processed an unknown item index ${index}`);
    const count = this.counts[index]!;
    if (count === 0) this.distinct++;
    if (count === 1) this.duplicates++;
    this.counts[index] = Math.min(count + 1, 0xffff);
    this.processed++;
    if (this.distinct === this.items && this.doneAtMs === null) this.doneAtMs = performance.now();
  }

  /** Every item processed at least once (a repeat does not stand in for a missing item). */
  get done(): boolean {
    return this.distinct === this.items;
  }

  /** Items per second from `startMs` to when the last missing item was processed. */
  ratePerS(startMs: number): number {
    return this.items / (((this.doneAtMs ?? performance.now()) - startMs) / 1000);
  }
}

/**
 * LOOPS producers take the next perCall indexes until `items` are handed out,
 * each awaiting its call before the next; resolves with items per second.
 */
export async function produce(items: number, perCall: number, send: (indexes: number[]) => Promise<void>): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: LOOPS }, async () => {
      while (next < items) {
        const first = next;
        next = Math.min(items, next + perCall);
        const indexes: number[] = [];
        for (let i = first; i < next; i++) indexes.push(i);
        await send(indexes);
      }
    }),
  );
  return items / ((performance.now() - start) / 1000);
}

/** A JSON payload of about PAYLOAD_BYTES for the libraries, carrying the item's index. */
export function jsonPayload(index: number): { i: number; pad: string } {
  return { i: index, pad: "x".repeat(PAYLOAD_BYTES - 20) };
}

/** How long a drain may go without one more distinct item processed before it is called stalled. */
export const DRAIN_STALL_MS = 30_000;

/** Throws when no new item has been processed for DRAIN_STALL_MS (repeats do not count); call it from each consumer loop. */
export class StallWatch {
  private lastCount = 0;
  private lastMoveMs = performance.now();

  constructor(private readonly ledger: ProcessedLedger) {}

  check(): void {
    const now = performance.now();
    if (this.ledger.distinct !== this.lastCount) {
      this.lastCount = this.ledger.distinct;
      this.lastMoveMs = now;
    } else if (now - this.lastMoveMs > DRAIN_STALL_MS) {
      throw new Error(`drain stalled at ${this.ledger.distinct} distinct of ${this.ledger.items} items`);
    }
  }
}

/**
 * Which items a session is handling. The warm-up's go under a name of their
 * own (orq's topic, pg-boss's queue, graphile-worker's task), so the timed
 * run's name is first used by the timed run, as it was before there was a
 * warm-up, and nothing the warm-up left could reach the timed consumers
 * (docs/decisions/043-comparison-warm-up.md).
 */
export type Phase = "warm-up" | "timed";

/**
 * One system's pair on a fresh database: set up by its runner, warmed up and
 * measured by measurePair. A phase's enqueue and drain share its ledger, which
 * says how many items there are.
 */
export interface PairSession {
  /** Enqueue every item of the ledger; resolves with items per second. */
  enqueue(phase: Phase, ledger: ProcessedLedger): Promise<number>;
  /** Process every item exactly as the system's consumer would; resolves with items per second. */
  drain(phase: Phase, ledger: ProcessedLedger): Promise<number>;
  close(): Promise<void>;
}
