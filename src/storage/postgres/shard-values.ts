// One loaded shard's committed item values, for the item cache
// (item-cache.ts), packed into pages: a few large append-only buffers per
// shard, and a map from each key to its value's place in them (a number). A
// million items are a million map entries and some hundreds of buffers, not
// a million typed arrays: JavaScriptCore's collections mark every object the
// heap holds, and the values' arrays were half of a cluster node's objects
// (decisions/049-item-values-in-pages.md).
//
// A load copies its rows into pages; a commit copies each value it writes
// into the shard's open page. Bytes once written are never changed (a value
// read out is a view that stays valid), so a value written again goes to a
// new place and its old place is dead. A page with nothing live is let go; a
// full page whose live bytes fall below half its size has its live values
// copied to the open page and is let go too, so the pages hold at most twice
// the live bytes plus the open page.

import { assert } from "../../lib/assert.ts";
import type { ItemKey } from "../store.ts";

/** Bytes a page is made with (256 KiB): a value larger than that gets a page of its own size. */
export const valuePageBytes = 256 * 1024;

/** A value's place: its page's index times placeStride plus the offset of its bytes; their length is in the 4 bytes before them. */
const placeStride = 2 ** 32;
/** Bytes before each value: its length. */
const lengthBytes = 4;

interface Page {
  readonly index: number;
  readonly bytes: Uint8Array;
  readonly view: DataView;
  /** Where the next value goes. */
  used: number;
  /** Bytes (lengths included) of values still current. */
  liveBytes: number;
  /** Keys written to the page, in order (a key may be listed again, or have moved on): what a compaction looks through. */
  readonly keys: ItemKey[];
}

export class ShardValues {
  private readonly places = new Map<ItemKey, number>();
  private readonly pages: Array<Page | null> = [];
  private open: Page | null = null;
  /** Pages that may be let go (compactQueued). */
  private readonly queue: Page[] = [];
  private pagesHeldCount = 0;

  get size(): number {
    return this.places.size;
  }

  /** Pages holding live values (the open one included). */
  get pagesHeld(): number {
    return this.pagesHeldCount;
  }

  /** Bytes of the pages held: what the values cost in memory. */
  get pageBytes(): number {
    let bytes = 0;
    for (const page of this.pages) if (page !== null) bytes += page.bytes.length;
    return bytes;
  }

  /** Loaded rows (a load reads each key once: a key already held is a bug). */
  load(keys: readonly ItemKey[], values: readonly Uint8Array[]): void {
    assert(keys.length === values.length, "one value per loaded key");
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as ItemKey;
      if (this.places.has(key)) assert(false, `key ${key} loaded twice`);
      this.places.set(key, this.append(key, values[i] as Uint8Array));
    }
    this.compactQueued();
  }

  get(key: ItemKey): Uint8Array | undefined {
    const place = this.places.get(key);
    return place === undefined ? undefined : this.valueAt(place);
  }

  /** Set a key's value (copied); true when the key is new. */
  set(key: ItemKey, value: Uint8Array): boolean {
    const before = this.places.get(key);
    this.places.set(key, this.append(key, value));
    if (before !== undefined) this.release(before);
    this.compactQueued();
    return before === undefined;
  }

  delete(key: ItemKey): void {
    const before = this.places.get(key);
    if (before === undefined) return;
    this.places.delete(key);
    this.release(before);
    this.compactQueued();
  }

  keys(): IterableIterator<ItemKey> {
    return this.places.keys();
  }

  /** Every value, in the map's order (a load's keys as read, then new keys as they came). */
  *entries(): Generator<[ItemKey, Uint8Array]> {
    for (const [key, place] of this.places) yield [key, this.valueAt(place)];
  }

  /**
   * Every value read in place, in the map's order: `read` gets the page's
   * bytes and the value's bounds in them, so a shard's walk makes no view
   * per value (decisions/052).
   */
  *read<T>(read: (key: ItemKey, bytes: Uint8Array, start: number, end: number) => T): Generator<T> {
    for (const [key, place] of this.places) {
      const page = this.pageOf(place);
      const start = place % placeStride;
      yield read(key, page.bytes, start, valueEnd(page, start));
    }
  }

  private valueAt(place: number): Uint8Array {
    return valueIn(this.pageOf(place), place % placeStride);
  }

  private pageOf(place: number): Page {
    return this.pages[Math.floor(place / placeStride)] as Page;
  }

  /** Copy a value into the open page (a new one when it does not fit) and return its place. */
  private append(key: ItemKey, value: Uint8Array): number {
    const size = lengthBytes + value.length;
    let page = this.open;
    if (page === null || page.used + size > page.bytes.length) {
      // The page closing may already be mostly dead.
      if (page !== null) this.queue.push(page);
      page = this.newPage(Math.max(valuePageBytes, size));
    }
    page.view.setUint32(page.used, value.length, true);
    page.bytes.set(value, page.used + lengthBytes);
    const place = page.index * placeStride + page.used + lengthBytes;
    page.used += size;
    page.liveBytes += size;
    page.keys.push(key);
    return place;
  }

  private newPage(size: number): Page {
    const bytes = new Uint8Array(size);
    // A freed slot is reused, so the place numbers stay small.
    let index = this.pages.indexOf(null);
    if (index < 0) index = this.pages.length;
    const page: Page = { index, bytes, view: new DataView(bytes.buffer), used: 0, liveBytes: 0, keys: [] };
    this.pages[index] = page;
    this.pagesHeldCount++;
    this.open = page;
    return page;
  }

  private release(place: number): void {
    const page = this.pageOf(place);
    page.liveBytes -= lengthBytes + page.view.getUint32((place % placeStride) - lengthBytes, true);
    if (page !== this.open && page.liveBytes * 2 < page.bytes.length) this.queue.push(page);
  }

  /**
   * Let go of the queued pages that are empty, or less than half live (their
   * live values copied to the open page first). A page stays in `pages` until
   * its values have moved, so its slot is not reused while they do.
   */
  private compactQueued(): void {
    while (this.queue.length > 0) {
      const page = this.queue.pop() as Page;
      if (this.pages[page.index] !== page || page === this.open) continue;
      if (page.liveBytes > 0 && page.liveBytes * 2 >= page.bytes.length) continue;
      if (page.liveBytes > 0) {
        for (const key of page.keys) {
          const place = this.places.get(key);
          if (place === undefined || Math.floor(place / placeStride) !== page.index) continue;
          this.places.set(key, this.append(key, valueIn(page, place % placeStride)));
        }
      }
      this.pages[page.index] = null;
      this.pagesHeldCount--;
    }
  }
}

/** The value at `offset` of a page: a view (the page's bytes never change once written). */
function valueIn(page: Page, offset: number): Uint8Array {
  return page.bytes.subarray(offset, valueEnd(page, offset));
}

/** Where the value at `offset` of a page ends (its length is in the bytes before it). */
function valueEnd(page: Page, offset: number): number {
  return offset + page.view.getUint32(offset - lengthBytes, true);
}
