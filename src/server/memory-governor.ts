// The heap-growth governor, orq's GOGC. JavaScriptCore sizes its heap for
// throughput: under a steady enqueue load it lets garbage (decoded frames,
// records, promises) that outlived a young-generation collection pile up to
// more than the live heap before a full collection: without the governor a
// server that has just taken 1,000,000 items holds about twice the anonymous
// memory it holds once collected (docs/decisions/006-heap-governor.md). The
// idle collection (idle-gc.ts) needs a quiet spell; this one does not: while
// requests arrive it reads the heap size every `checkMs`, and once the heap
// has grown by `growthFactor` since the last full collection it runs one.
//
// The reading is the heap's capacity, `process.memoryUsage().heapTotal`
// (JavaScriptCore's blocks, live or garbage; about 20 µs). Not `heapUsed`:
// that one moves only when a collection runs (it is what the last one
// found), so between JavaScriptCore's own collections it cannot see
// garbage pile up, and the heap reaches 1.9x its live size unseen
// (docs/decisions/006-heap-governor.md). Not bun:jsc `heapSize()` either, at
// every check: it counts every block's mark bits, 1.4 ms at 1,000,000 live
// objects and up to 9 ms under load (10% of the main thread in the Jupiter
// scenario); once per collection, for the steady stretch below, it is.
//
// The collection (in production) is `Bun.gc(true)`: full, synchronous, and
// it sweeps before it returns, so the blocks it frees leave the capacity,
// and the process, at once. bun:jsc `fullGC()` leaves them to the
// incremental sweeper: the capacity read after it stays high, the next
// trigger would be measured from there, and RSS falls only over the next
// seconds. (`Bun.gc(false)` is a young-generation collection that leaves
// old garbage where it is.)
//
// "Since the last collection" is the capacity read right after it, lowered
// by any smaller reading since (JavaScriptCore's own collections).
//
// It stands aside while the live heap holds steady. Under a steady load on
// top of a large backlog the garbage that refills a quarter of the heap is
// young: JavaScriptCore's own young collections take it, mostly concurrently,
// and pacing there would block the server for 40-90 ms about once a second
// (docs/decisions/007-governor-stands-aside.md). A load (items arriving) or a
// drain (items ending) makes or frees old objects, which only a full
// collection takes; there the governor keeps its pace. So it compares the
// live bytes each of its collections found (`collect` returns them: bun:jsc
// `heapSize()` read right after the collection, 2-4 ms with 1,000,000 items,
// once per collection and never per check) with the reading that began the
// current steady stretch. Not the capacity read after it: a collection that
// keeps the pages it frees (below) leaves its sweep to later, so the capacity
// right after it is the capacity before it, and judged on capacities the
// governor would never stand aside (92-93 blocking collections in 90 s of
// steady load on a 1,000,000-item backlog:
// docs/decisions/007-governor-stands-aside.md). Once the readings have stayed
// within `liveChangeMin` of it for `steadyForMs`, it stands aside: it
// collects only when the capacity reaches `standAsideCeilingFactor` times the
// base, a ceiling JavaScriptCore's own collections kept well below in that
// state. A reading outside that band starts a new stretch and brings it back
// to pacing. Time, not a count of close readings: during a load the capacity
// left after a collection moves by up to a tenth either way with the garbage
// still in flight (records waiting for their commit), so two or three close
// readings in a row occur while the live heap grows; over seconds it grows
// far more than the band. A load or a drain that begins while it stands aside
// would grow the heap up to the ceiling before a collection saw it
// (unwatched, a drain after a steady spell peaks at 684 MiB RSS against about
// 330), so standing aside it also watches the live item count (`liveItems`,
// the engine's): once that has moved by `liveChangeMin` since it stood aside,
// it paces again at once. (Not until `heapUsed` grows by `growthFactor`: old
// garbage, promoted by young collections while in flight, grows it that much
// every few seconds.)
//
// Below `heapBytesMin` (a server without a large backlog) it leaves the
// pacing to JavaScriptCore but still collects fully once every
// `smallHeapCollectEveryMs` while requests arrive. JavaScriptCore's own
// collections there are mostly young ones, and the blocks it keeps between
// its full collections drift up over an hour of steady load (in the soak,
// anonymous memory at the intervals' troughs rises ~16 MiB an hour while the
// live heap, measured after full collections, stays flat). A full collection
// of a heap that small blocks for about 20 ms (17-25 ms under the soak's
// load), once every 30 s: under a tenth of a percent of the main thread
// (docs/decisions/006-heap-governor.md).
//
// What a collection does with the pages it frees (`FreedPages`). A
// collection the allocator is told of (`Bun.gc(true)` in production) hands
// every free page back to the OS at once (mimalloc purges them: one
// `madvise` per free range, each a TLB shootdown across the process's
// threads), and the allocations that follow fault them back in. While the
// live item count grows (a load) that is what pacing is for: memory right
// after the load. While it holds or falls (a drain, acquisitions, a steady
// load) the pages freed are the garbage's, refilled within the next interval,
// and returning them costs about a quarter of the server's CPU per drained
// item and an eighth per Jupiter acquisition
// (docs/decisions/001-mimalloc-purge-delay.md). So a pacing collection with
// no more live items than at the last collection keeps them (`fullGC()` of
// bun:jsc: the same full collection, its sweep left to the incremental
// sweeper and the pages to the allocator, which purges what stays unused for
// `allocatorEnv`'s purge delay); every other collection (a load's, the
// ceiling's, the cadence's) returns them.
//
// Like idle-gc.ts, the timer is armed only while requests arrive (from either
// port: `orq serve` notes them through the one request-done hook,
// request-done.ts): an idle server has none. `onArm` hears each time a
// request arms it after a quiet spell, which `orq serve` logs at debug level.
//
// The same tick keeps the LMDB map's resident pages in check (`mapped`,
// storage/lmdb/map-pages.ts): once the process's file-backed resident memory
// has grown by `growthBytes` since the last drop, the map's pages are
// unmapped (they stay in the page cache; the next read maps one again).

import { heapGovernor } from "../limits.ts";
import type { IdleTimers } from "./idle-gc.ts";

/** Why the governor collects: the heap grew by growthFactor (pacing), reached the stand-aside ceiling, or the small heap's cadence came round. */
export type CollectReason = "growth" | "ceiling" | "cadence";

/** What the collection does with the pages it frees: hand them back to the OS at once, or keep them with the allocator (see the file's comment). */
export type FreedPages = "return" | "keep";

export interface HeapGovernorOptions {
  timers: IdleTimers;
  /** The JS heap's size in bytes now (its capacity, process.memoryUsage().heapTotal, in production). */
  heapBytes: () => number;
  /**
   * Collect now, synchronously; `heapBytes` is the capacity when it was asked
   * for, `reason` why (CollectReason), `freed` what to do with the pages it
   * frees. Returns the bytes the collection found live (bun:jsc heapSize()
   * right after it in production): exact after a full collection whether or
   * not it swept, where the capacity is not.
   */
  collect: (heapBytes: number, reason: CollectReason, freed: FreedPages) => number;
  growthFactor?: number;
  standAsideCeilingFactor?: number;
  liveChangeMin?: number;
  steadyForMs?: number;
  /** A monotonic clock in ms (an injected clock in tests). */
  nowMs: () => number;
  /** Live items now (the engine's item count): a load or a drain that begins while the governor stands aside. */
  liveItems?: () => number;
  checkMs?: number;
  heapBytesMin?: number;
  smallHeapCollectEveryMs?: number;
  /** The LMDB map's pages (absent without an LMDB store). */
  mapped?: MappedPagesCheck;
  /** A request armed the check timer after a quiet spell (not the re-arms while requests keep arriving). */
  onArm?: () => void;
  /**
   * True while the heap grows by live objects that a collection would only
   * mark (a cluster node filing in a shard it adopts): no collection is paced
   * then, and the capacity when it turns false is the new base.
   */
  holdOff?: () => boolean;
}

export interface MappedPagesCheck {
  /** File-backed resident bytes of the process now (/proc/self/statm's shared pages in production). */
  residentBytes: () => number;
  /** Unmap the map's resident pages now. */
  drop: () => void;
  /** Growth of `residentBytes` since the last drop that triggers the next. */
  growthBytes: number;
}

export class HeapGovernor {
  /** Collections asked for (stats and tests). */
  collections = 0;
  /** Drops of the map's resident pages (stats and tests). */
  mappedDrops = 0;
  private readonly growthFactor: number;
  private readonly standAsideCeilingFactor: number;
  private readonly liveChangeMin: number;
  private readonly steadyForMs: number;
  private readonly checkMs: number;
  private readonly heapBytesMin: number;
  private readonly smallHeapCollectEveryMs: number;
  /** When the last collection (any reason) ended, on the injected clock. */
  private collectedAtMs: number;
  /** The heap's size after the last collection, as far as the checks saw it. */
  private baseBytes: number;
  /** The live bytes found by the collection that began the current steady stretch, and when (null before the first). */
  private stretch: { liveBytes: number; sinceMs: number } | null = null;
  /** Whether the live heap has held steady for steadyForMs: see the file's comment. */
  private aside = false;
  /** The live item count when the governor stood aside. */
  private itemsAtAside = 0;
  /** The live item count at the last collection (at construction before the first); null without liveItems. */
  private itemsAtCollection: number | null;
  /** File-backed resident bytes after the last drop, lowered by any smaller reading since. */
  private mappedBaseBytes: number;
  /** Whether the last check found holdOff true. */
  private heldOff = false;
  private requests = 0;
  private requestsAtArm = 0;
  private handle: unknown = null;
  private stopped = false;

  constructor(private readonly options: HeapGovernorOptions) {
    this.growthFactor = options.growthFactor ?? heapGovernor.growthFactor;
    this.standAsideCeilingFactor = options.standAsideCeilingFactor ?? heapGovernor.standAsideCeilingFactor;
    this.liveChangeMin = options.liveChangeMin ?? heapGovernor.liveChangeMin;
    this.steadyForMs = options.steadyForMs ?? heapGovernor.steadyForMs;
    this.checkMs = options.checkMs ?? heapGovernor.checkMs;
    this.heapBytesMin = options.heapBytesMin ?? heapGovernor.heapBytesMin;
    this.smallHeapCollectEveryMs = options.smallHeapCollectEveryMs ?? heapGovernor.smallHeapCollectEveryMs;
    this.collectedAtMs = options.nowMs();
    this.baseBytes = options.heapBytes();
    this.mappedBaseBytes = options.mapped === undefined ? 0 : options.mapped.residentBytes();
    this.itemsAtCollection = options.liveItems?.() ?? null;
  }

  /** One request. The hot path: a counter and a flag. */
  noteRequest(): void {
    this.requests += 1;
    if (this.handle !== null || this.stopped) return;
    this.arm();
    this.options.onArm?.();
  }

  /** The capacity the next collection waits for. */
  get triggerBytes(): number {
    return Math.max(this.heapBytesMin, this.baseBytes * (this.aside ? this.standAsideCeilingFactor : this.growthFactor));
  }

  /** Whether the live heap has held steady and the governor leaves the collections to JavaScriptCore. */
  get standingAside(): boolean {
    return this.aside;
  }

  get armed(): boolean {
    return this.handle !== null;
  }

  stop(): void {
    this.stopped = true;
    if (this.handle !== null) this.options.timers.clear(this.handle);
    this.handle = null;
  }

  private arm(): void {
    this.requestsAtArm = this.requests;
    this.handle = this.options.timers.set(() => this.onTimer(), this.checkMs);
  }

  private onTimer(): void {
    this.handle = null;
    if (this.stopped) return;
    this.check();
    // Keep checking while requests arrive; a quiet interval disarms (the next request re-arms).
    if (this.requests !== this.requestsAtArm) this.arm();
  }

  private check(): void {
    this.checkMapped();
    const heapBytes = this.options.heapBytes();
    // A full collection while a shard's items are filed in finds them live and blocks the node's other shards for
    // the whole mark (a 1,000,000-item node adopting half of them: 233-293 ms; docs/decisions/038-per-shard-moves.md).
    if (this.options.holdOff?.() === true) {
      this.heldOff = true;
      return;
    }
    if (this.heldOff) {
      this.heldOff = false;
      this.baseBytes = heapBytes;
    }
    if (heapBytes < this.baseBytes) this.baseBytes = heapBytes;
    if (this.aside && this.liveItemsMoved()) this.pace();
    if (heapBytes >= this.triggerBytes) {
      this.noteLiveChange(this.collect(heapBytes, this.aside ? "ceiling" : "growth"));
    } else if (heapBytes < this.heapBytesMin && this.options.nowMs() - this.collectedAtMs >= this.smallHeapCollectEveryMs) {
      // Not a pacing collection: the stretch and the stand-aside state stay as they are.
      this.collect(heapBytes, "cadence");
    }
  }

  /**
   * Collect now; the capacity after it is the new base (a collection that
   * leaves its sweep to later leaves it high: a smaller reading at a later
   * check lowers it). Returns the live bytes the collection found.
   */
  private collect(heapBytes: number, reason: CollectReason): number {
    this.collections++;
    const liveBytes = this.options.collect(heapBytes, reason, this.freedPages(reason));
    this.baseBytes = this.options.heapBytes();
    this.collectedAtMs = this.options.nowMs();
    return liveBytes;
  }

  /** Stand aside once the live bytes its collections found have stayed within liveChangeMin for steadyForMs; pace again once they leave. */
  private noteLiveChange(liveBytes: number): void {
    const nowMs = this.options.nowMs();
    const stretch = this.stretch;
    if (stretch === null || Math.abs(liveBytes - stretch.liveBytes) >= stretch.liveBytes * this.liveChangeMin) {
      this.stretch = { liveBytes, sinceMs: nowMs };
      this.aside = false;
      return;
    }
    if (!this.aside && nowMs - stretch.sinceMs >= this.steadyForMs) {
      this.aside = true;
      this.itemsAtAside = this.options.liveItems?.() ?? 0;
    }
  }

  /** Keep the freed pages only when pacing finds no more live items than the last collection did (a drain or a steady spell). */
  private freedPages(reason: CollectReason): FreedPages {
    const before = this.itemsAtCollection;
    const now = this.options.liveItems?.() ?? null;
    this.itemsAtCollection = now;
    return reason === "growth" && before !== null && now !== null && now <= before ? "keep" : "return";
  }

  private liveItemsMoved(): boolean {
    const liveItems = this.options.liveItems;
    if (liveItems === undefined) return false;
    // At least one item: a server that stood aside with none paces again at its first.
    return Math.abs(liveItems() - this.itemsAtAside) >= Math.max(1, this.itemsAtAside * this.liveChangeMin);
  }

  /** Back to pacing, with a new steady stretch from the next collection. */
  private pace(): void {
    this.aside = false;
    this.stretch = null;
  }

  private checkMapped(): void {
    const mapped = this.options.mapped;
    if (mapped === undefined) return;
    const residentBytes = mapped.residentBytes();
    if (residentBytes < this.mappedBaseBytes) this.mappedBaseBytes = residentBytes;
    if (residentBytes - this.mappedBaseBytes < mapped.growthBytes) return;
    this.mappedDrops++;
    mapped.drop();
    this.mappedBaseBytes = mapped.residentBytes();
  }
}
