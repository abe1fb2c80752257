// The heap-growth governor, orq's GOGC. JavaScriptCore sizes its heap for
// throughput: under a steady enqueue load it lets garbage (decoded frames,
// records, promises) that outlived a young-generation collection pile up to
// more than the live heap before a full collection, and a server that has
// just taken 1,000,000 items held 551 MiB of anonymous memory against 234 MiB
// once an idle collection ran (BENCHMARKS.md, Memory). The idle collection
// (idle-gc.ts) needs a quiet spell; this one does not: while requests arrive
// it reads the heap size every `checkMs`, and once the heap has grown by
// `growthFactor` since the last full collection it runs one.
//
// The reading is the heap's capacity, `process.memoryUsage().heapTotal`
// (JavaScriptCore's blocks, live or garbage; about 20 µs). Not `heapUsed`:
// that one moves only when a collection runs (it is what the last one
// found), so between JavaScriptCore's own collections it cannot see
// garbage pile up, and with it the heap reached 1.9x its live size while
// the governor waited. Not bun:jsc `heapSize()` either: it counts every
// block's mark bits, 1.4 ms at 1,000,000 live objects and up to 9 ms under
// load (10% of the main thread in the Jupiter scenario, BENCHMARKS.md).
//
// The collection (in production) is `Bun.gc(true)`: full, synchronous, and
// it sweeps before it returns, so the blocks it frees leave the capacity,
// and the process, at once. bun:jsc `fullGC()` leaves them to the
// incremental sweeper: the capacity read after it stayed high, the next
// trigger was measured from there, and RSS fell only over the next
// seconds. (`Bun.gc(false)` is a young-generation collection that leaves
// old garbage where it is.)
//
// "Since the last collection" is the capacity read right after it, lowered
// by any smaller reading since (JavaScriptCore's own collections). Like
// idle-gc.ts, the timer is armed only while requests arrive: an idle server
// has none.
//
// The same tick keeps the LMDB map's resident pages in check (`mapped`,
// storage/lmdb/map-pages.ts): once the process's file-backed resident memory
// has grown by `growthBytes` since the last drop, the map's pages are
// unmapped (they stay in the page cache; the next read maps one again).

import { heapGovernor } from "../limits.ts";
import type { IdleTimers } from "./idle-gc.ts";

export interface HeapGovernorOptions {
  timers: IdleTimers;
  /** The JS heap's size in bytes now (its capacity, process.memoryUsage().heapTotal, in production). */
  heapBytes: () => number;
  /** Collect now, synchronously; `heapBytes` is the size that triggered it. */
  collect: (heapBytes: number) => void;
  growthFactor?: number;
  checkMs?: number;
  heapBytesMin?: number;
  /** The LMDB map's pages (absent without an LMDB store). */
  mapped?: MappedPagesCheck;
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
  private readonly checkMs: number;
  private readonly heapBytesMin: number;
  /** The heap's size after the last collection, as far as the checks saw it. */
  private baseBytes: number;
  /** File-backed resident bytes after the last drop, lowered by any smaller reading since. */
  private mappedBaseBytes: number;
  private requests = 0;
  private requestsAtArm = 0;
  private handle: unknown = null;
  private stopped = false;

  constructor(private readonly options: HeapGovernorOptions) {
    this.growthFactor = options.growthFactor ?? heapGovernor.growthFactor;
    this.checkMs = options.checkMs ?? heapGovernor.checkMs;
    this.heapBytesMin = options.heapBytesMin ?? heapGovernor.heapBytesMin;
    this.baseBytes = options.heapBytes();
    this.mappedBaseBytes = options.mapped === undefined ? 0 : options.mapped.residentBytes();
  }

  /** One request. The hot path: a counter and a flag. */
  noteRequest(): void {
    this.requests += 1;
    if (this.handle === null && !this.stopped) this.arm();
  }

  /** The heap size the next collection waits for. */
  get triggerBytes(): number {
    return Math.max(this.heapBytesMin, this.baseBytes * this.growthFactor);
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
    if (heapBytes < this.baseBytes) this.baseBytes = heapBytes;
    if (heapBytes < this.triggerBytes) return;
    this.collections++;
    this.options.collect(heapBytes);
    this.baseBytes = this.options.heapBytes();
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
