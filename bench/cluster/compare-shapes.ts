// What the PostgreSQL comparison measures, shared by every system's runner:
// the two shape pairs (batched: enqueue 100 per call, then drain in batches;
// single: enqueue one per call, then drain one at a time), the producers'
// loop, and the ledger that checks every item was processed exactly once.
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
  processed = 0;
  /**
   * performance.now() when the last item was first processed: a drain ends
   * there, not when its consumer loops have returned from their last (empty)
   * fetch, which would add a wait that is the loop's, not the system's.
   */
  doneAtMs: number | null = null;

  constructor(readonly items: number) {
    this.counts = new Uint16Array(items);
  }

  record(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.items) throw new Error(`processed an unknown item index ${index}`);
    this.counts[index] = Math.min(this.counts[index]! + 1, 0xffff);
    this.processed++;
    if (this.processed === this.items) this.doneAtMs = performance.now();
  }

  /** Items per second from `startMs` to when the last item was processed. */
  ratePerS(startMs: number): number {
    return this.items / (((this.doneAtMs ?? performance.now()) - startMs) / 1000);
  }

  get distinct(): number {
    let n = 0;
    for (const count of this.counts) if (count > 0) n++;
    return n;
  }

  get duplicates(): number {
    let n = 0;
    for (const count of this.counts) if (count > 1) n++;
    return n;
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

/** How long a drain may go without one more item processed before it is called stalled. */
export const DRAIN_STALL_MS = 30_000;

/** Throws when `ledger` has not moved for DRAIN_STALL_MS; call it from each consumer loop. */
export class StallWatch {
  private lastCount = 0;
  private lastMoveMs = performance.now();

  constructor(private readonly ledger: ProcessedLedger) {}

  check(): void {
    const now = performance.now();
    if (this.ledger.processed !== this.lastCount) {
      this.lastCount = this.ledger.processed;
      this.lastMoveMs = now;
    } else if (now - this.lastMoveMs > DRAIN_STALL_MS) {
      throw new Error(`drain stalled at ${this.ledger.processed} of ${this.ledger.items} items`);
    }
  }
}

/** One system's pair on a fresh database: set up by its runner, measured by measurePair. */
export interface PairSession {
  /** Enqueue every item; resolves with items per second. */
  enqueue(): Promise<number>;
  /** Process every item exactly as the system's consumer would; resolves with items per second. */
  drain(): Promise<number>;
  close(): Promise<void>;
}
