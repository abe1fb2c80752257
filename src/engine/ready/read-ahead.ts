// Delivery read-ahead: the stored value of the item the next dequeue will
// most likely take, read when the writer goes idle instead of inside that
// dequeue.
//
// Why: a delivery reads its item's payload back from the store (memory drops
// it once the enqueue is durable). A worker taking one item at a time asks
// for the next right after its ack's commit lands, and on a machine that sat
// out the fsync, the store's B-tree descent is cold: an LMDB read takes 0.5
// µs back to back and 4-10 µs after a commit, and the read and its copy are a
// quarter to a third of a cold dequeue's excess
// (docs/decisions/011-delivery-read-ahead.md). Read when that commit lands
// (before its replies go out), the value is in hand and in cache when the
// dequeue comes.
//
// Why it is never stale: only this process writes the store, and the writer's
// commitGeneration moves as every commit starts and lands. The value is read
// while no commit is in flight and used only while the generation has not
// moved, so it is exactly what a read at delivery would return. Anything else
// (another item taken first, a commit in between) reads the store as before,
// and the value waits, unused, until the next read-ahead replaces it.
//
// What it guesses: the best item of the topic the last delivering dequeue
// took from, for that dequeue's capabilities. One value (the worker that asks
// one at a time is the case it serves; a busy server is rarely idle, so it
// rarely reads ahead at all). Not in cluster mode, where a node may lose a
// shard between the read and the dequeue (engine.ts does not install it).

import type { ItemRecord } from "../../storage/record.ts";
import type { ItemKey, Store } from "../../storage/store.ts";
import type { ItemValueBytes } from "../../storage/item-record.ts";
import type { Writer } from "../../storage/writer.ts";

/** The store reads the engine makes, with the read-ahead value served first when it is the one asked for. */
export class ReadAheadReader implements Pick<Store, "readItem" | "readItemBytes" | "viewItemBytes" | "readDeliveryBytes"> {
  private shard = -1;
  private key: ItemKey = -1;
  private value: Uint8Array | null = null;
  private generation = -1;
  /** Read-aheads handed to a delivery, and read-aheads replaced unused (the guess was wrong or a commit came first). */
  hits = 0;
  wasted = 0;

  /** Present when the store offers views (Store.viewItemBytes): the read-ahead value first, else the store's view. */
  readonly viewItemBytes: ((shard: number, key: ItemKey) => Uint8Array | null) | undefined;

  constructor(
    private readonly store: Pick<Store, "readItem" | "readItemBytes" | "viewItemBytes" | "readDeliveryBytes">,
    private readonly writer: Pick<Writer, "commitGeneration">,
  ) {
    this.viewItemBytes = store.viewItemBytes === undefined ? undefined : (shard, key) => this.takeReadAhead(shard, key) ?? this.viewOfStore(shard, key);
  }

  /** Read `shard`/`key` now, for the next readItemBytes of it. Only while no commit is in flight. */
  readAhead(shard: number, key: ItemKey): void {
    const generation = this.writer.commitGeneration;
    // Odd: a commit is in flight, and what it changes may land after the read.
    if (generation % 2 !== 0) return;
    if (this.value !== null) {
      if (this.shard === shard && this.key === key && this.generation === generation) return;
      this.wasted++;
    }
    this.value = this.store.readItemBytes(shard, key);
    this.shard = shard;
    this.key = key;
    this.generation = generation;
  }

  readItemBytes(shard: number, key: ItemKey): Uint8Array | null {
    return this.takeReadAhead(shard, key) ?? this.store.readItemBytes(shard, key);
  }

  private viewOfStore(shard: number, key: ItemKey): Uint8Array | null {
    return (this.store as Required<Pick<Store, "viewItemBytes">>).viewItemBytes(shard, key);
  }

  private holdsReadAhead(shard: number, key: ItemKey): boolean {
    return this.value !== null && this.shard === shard && this.key === key && this.generation === this.writer.commitGeneration;
  }

  /** The value read ahead, when it is `shard`/`key`'s and no commit has moved since; handed out once: the caller owns (and may patch) the copy. */
  private takeReadAhead(shard: number, key: ItemKey): Uint8Array | null {
    const value = this.value;
    if (value === null || !this.holdsReadAhead(shard, key)) return null;
    this.value = null;
    this.hits++;
    return value;
  }

  /** The store's ring of recent values (044), unless the value read ahead is `shard`/`key`'s (it is taken then). */
  readDeliveryBytes(shard: number, key: ItemKey, into: ItemValueBytes): boolean {
    if (this.store.readDeliveryBytes === undefined || this.holdsReadAhead(shard, key)) return false;
    return this.store.readDeliveryBytes(shard, key, into);
  }

  readItem(shard: number, key: ItemKey): ItemRecord | null {
    return this.store.readItem(shard, key);
  }
}
