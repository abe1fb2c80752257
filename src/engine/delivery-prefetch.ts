// Delivery prefetch: once a dequeue has delivered, the stored values of the
// items the next dequeues of the same ready heaps will most likely take are
// read in off the main thread (Store.prefetchItems; in the LMDB store a
// worker thread reads them, taking any page fault there).
//
// Why: a delivery reads its item's payload back from the store (memory drops
// it once the enqueue is durable). In priority order those reads land all
// over the store, and the map's pages are unmapped from time to time to bound
// RSS (docs/decisions/010-map-page-unmapping.md), so without this nearly every
// delivery took a page fault on the main thread
// (docs/decisions/028-delivery-prefetch.md).
//
// What it guesses, sized by demand: for each heap a dequeue delivered from,
// the next items of that heap (ReadyHeap.nextKeys), twice as many as the
// dequeue took from it, at most deliveryPrefetch.keysPerHeapMax. It holds no
// item bytes itself: what it brings in is the store's mapped pages, which the
// map-page policy bounds. A wrong guess costs a lookup on the worker.

import { deliveryPrefetch } from "../limits.ts";
import type { ItemKey } from "../storage/item-key.ts";
import type { Store } from "../storage/store.ts";
import type { ReadyHeap, ReadyItem } from "./ready-heap.ts";

export class DeliveryPrefetch<Item extends ReadyItem<Item>> {
  /** The heaps the current dequeue delivered from, with how many each gave (parallel arrays, emptied by flush). */
  private readonly heaps: Array<ReadyHeap<Item>> = [];
  private readonly shards: number[] = [];
  private readonly taken: number[] = [];
  /** Keys to prefetch, by shard (reused). */
  private readonly keysByShard: ItemKey[][] = [];
  /** Keys asked for since start (metrics). */
  keysRequested = 0;

  constructor(private readonly store: Required<Pick<Store, "prefetchItems">>) {}

  /** A delivery came from `heap` (of shard `shard`). */
  delivered(heap: ReadyHeap<Item>, shard: number): void {
    const heaps = this.heaps;
    for (let i = heaps.length - 1; i >= 0; i--) {
      if (heaps[i] === heap) {
        this.taken[i] = (this.taken[i] as number) + 1;
        return;
      }
    }
    if (heaps.length >= deliveryPrefetch.heapsPerDequeueMax) return;
    heaps.push(heap);
    this.shards.push(shard);
    this.taken.push(1);
  }

  /** The dequeue is done: ask the store for the next items of every heap it delivered from. */
  flush(): void {
    const heaps = this.heaps;
    if (heaps.length === 0) return;
    for (let i = 0; i < heaps.length; i++) {
      const shard = this.shards[i] as number;
      let keys = this.keysByShard[shard];
      if (keys === undefined) {
        keys = [];
        this.keysByShard[shard] = keys;
      }
      const limit = Math.min(deliveryPrefetch.keysPerHeapMax, 2 * (this.taken[i] as number));
      (heaps[i] as ReadyHeap<Item>).nextKeys(limit, keys);
    }
    for (let i = 0; i < heaps.length; i++) {
      const shard = this.shards[i] as number;
      const keys = this.keysByShard[shard] as ItemKey[];
      if (keys.length === 0) continue;
      this.keysRequested += keys.length;
      this.store.prefetchItems(shard, keys);
      keys.length = 0;
    }
    heaps.length = 0;
    this.shards.length = 0;
    this.taken.length = 0;
  }
}
