// The outcomes of ended items, kept for outcomeRetentionMs so `get` can answer
// "ended" and `after` can tell an acked dependency from an unknown one.
//
// Why not a Map<string, …> by id: ack is the hot path of a drain, and a
// string-keyed lookup of a freshly built id (hashed on first use) plus the
// insert cost more than the rest of the ack together (in a drain's profile).
// Here each shard has a Map keyed by the numeric item key, which the ack path
// already holds. Items end in no particular key order, so the sorted arrays
// of ItemTable do not fit. An entry is its own OutcomeRecord (one object per
// ended item for memory, the write and the retention deadline); the deadline
// queue removes entries in end-time order. An acked item given an `ack`
// result is kept here too, with its result (the only copy in memory), so an
// acked outcome without one still costs only its acked block's few bytes.

import type { HeapNode } from "../../lib/pairing-heap.ts";
import type { Outcome, OutcomeRecord } from "../../storage/record.ts";
import type { ItemKey } from "../../storage/store.ts";
import type { Deadline, DeadlineKind } from "../time/deadlines.ts";
import { formatId, parseId } from "../state/ids.ts";

/** The end of a retained outcome's retention. */
export type OutcomeDeadline = Deadline<typeof DeadlineKind.OutcomeRetention, RetainedOutcome>;

export class RetainedOutcome implements OutcomeRecord {
  /** The retention deadline; set right after the entry is made. */
  node: HeapNode<OutcomeDeadline> | null = null;

  constructor(
    readonly shard: number,
    readonly key: ItemKey,
    readonly ns: string,
    readonly outcome: Outcome,
    readonly endedAtMs: number,
    /** The `ack` result of an acked item, or null. */
    readonly result: Uint8Array | null = null,
  ) {}

  /** `<shard>:<key>`, built on demand (the store keys outcomes by it). */
  get id(): string {
    return formatId(this.shard, this.key);
  }
}

export class OutcomeTable {
  private readonly shards: Array<Map<ItemKey, RetainedOutcome>> = [];
  private count = 0;
  private results = 0;
  private resultBytesTotal = 0;

  get size(): number {
    return this.count;
  }

  /** Entries holding an `ack` result. */
  get resultCount(): number {
    return this.results;
  }

  /** The bytes of the results held. */
  get resultBytes(): number {
    return this.resultBytesTotal;
  }

  /** The outcome retained for this id, or undefined (a malformed id is simply missing). */
  get(id: string): RetainedOutcome | undefined {
    const parsed = parseId(id);
    return parsed === null ? undefined : this.getByKey(parsed.shard, parsed.key);
  }

  getByKey(shard: number, key: ItemKey): RetainedOutcome | undefined {
    return this.shards[shard]?.get(key);
  }

  /** File an entry; returns the one it replaces (an item ended again after a partly failed commit), if any. */
  set(entry: RetainedOutcome): RetainedOutcome | undefined {
    let map = this.shards[entry.shard];
    if (map === undefined) {
      while (this.shards.length <= entry.shard) this.shards.push(new Map());
      map = this.shards[entry.shard] as Map<ItemKey, RetainedOutcome>;
    }
    const previous = map.get(entry.key);
    map.set(entry.key, entry);
    if (previous === undefined) this.count++;
    else this.countResult(previous, -1);
    this.countResult(entry, 1);
    return previous;
  }

  /** The shard's entries, copied (a caller may delete while it walks them). */
  shardEntries(shard: number): RetainedOutcome[] {
    const map = this.shards[shard];
    return map === undefined ? [] : [...map.values()];
  }

  /** Remove the entry if it is the one filed under its key. */
  delete(entry: RetainedOutcome): void {
    const map = this.shards[entry.shard];
    if (map === undefined || map.get(entry.key) !== entry) return;
    map.delete(entry.key);
    this.count--;
    this.countResult(entry, -1);
  }

  private countResult(entry: RetainedOutcome, sign: 1 | -1): void {
    if (entry.result === null) return;
    this.results += sign;
    this.resultBytesTotal += sign * entry.result.byteLength;
  }
}
