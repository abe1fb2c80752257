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
// What it asks for, at the rate deliveries take: each heap counts the items
// asked for that no delivery has taken yet (ReadyHeap.prefetchedAhead); when
// a delivery brings that below deliveryPrefetch.refillBelowKeys, the next
// deliveryPrefetch.keysPerHeapMax items of the heap (ReadyHeap.nextKeys) are
// asked for, once the dequeue is done, in one request per shard, so a heap
// costs one request per few dozen deliveries. Dequeues of a few items ask
// nothing (deliveryPrefetch.dequeueCountMin): a worker taking one at a time
// is served by the read-ahead (read-ahead.ts), and the walk and request
// would cost it more than the read they save. It holds no item bytes itself:
// what it brings in is the store's mapped pages, which the map-page policy
// bounds. A wrong guess (a better item came in since) costs a lookup on the
// worker.

import { deliveryPrefetch } from "../../limits.ts";
import type { ItemKey } from "../../storage/item-key.ts";
import type { Store } from "../../storage/store.ts";
import type { ReadyHeap, ReadyItem } from "./ready-heap.ts";

export class DeliveryPrefetch<Item extends ReadyItem<Item>> {
  /** The heaps the current dequeue left low, and their shards (parallel arrays, emptied by flush). */
  private readonly heaps: Array<ReadyHeap<Item>> = [];
  private readonly shards: number[] = [];
  /** Keys to prefetch, by shard (reused). */
  private readonly keysByShard: ItemKey[][] = [];
  /** Shards with keys waiting in keysByShard. */
  private readonly shardsWithKeys: number[] = [];
  /** Deliveries of the current dequeue. */
  private deliveries = 0;
  /** Keys asked for since start (metrics). */
  keysRequested = 0;

  constructor(private readonly store: Required<Pick<Store, "prefetchItems">>) {}

  /** A delivery came from `heap` (of shard `shard`). */
  delivered(heap: ReadyHeap<Item>, shard: number): void {
    this.deliveries++;
    if (heap.prefetchedAhead > 0) heap.prefetchedAhead--;
    if (heap.prefetchedAhead >= deliveryPrefetch.refillBelowKeys) return;
    const heaps = this.heaps;
    for (let i = heaps.length - 1; i >= 0; i--) if (heaps[i] === heap) return;
    if (heaps.length >= deliveryPrefetch.heapsPerDequeueMax) return;
    heaps.push(heap);
    this.shards.push(shard);
  }

  /**
   * The dequeue is done: ask the store for the next items of every heap it
   * left low, one request per shard. A dequeue that delivered fewer than
   * deliveryPrefetch.dequeueCountMin items asks nothing: for a worker taking
   * one at a time the ask costs more than the read it saves (the writer's
   * idle read-ahead serves it instead).
   */
  flush(): void {
    const heaps = this.heaps;
    const deliveries = this.deliveries;
    this.deliveries = 0;
    if (heaps.length === 0) return;
    if (deliveries < deliveryPrefetch.dequeueCountMin) {
      heaps.length = 0;
      this.shards.length = 0;
      return;
    }
    for (let i = 0; i < heaps.length; i++) {
      const shard = this.shards[i] as number;
      let keys = this.keysByShard[shard];
      if (keys === undefined) {
        keys = [];
        this.keysByShard[shard] = keys;
      }
      if (keys.length === 0) this.shardsWithKeys.push(shard);
      const heap = heaps[i] as ReadyHeap<Item>;
      const before = keys.length;
      heap.nextKeys(deliveryPrefetch.keysPerHeapMax, keys);
      heap.prefetchedAhead = keys.length - before;
    }
    for (const shard of this.shardsWithKeys) {
      const keys = this.keysByShard[shard] as ItemKey[];
      this.keysRequested += keys.length;
      this.store.prefetchItems(shard, keys);
      keys.length = 0;
    }
    this.shardsWithKeys.length = 0;
    heaps.length = 0;
    this.shards.length = 0;
  }
}
