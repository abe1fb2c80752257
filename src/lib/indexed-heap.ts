// A binary min-heap of objects that know their own position in it, so any
// entry can be re-keyed or removed in O(log n) without a search: the
// subclass says how two entries order and where an entry keeps its position.
// For heaps whose entries' keys move both ways and whose entries leave from
// anywhere (engine/groups: the rotation between groups, its least-v heap, the
// per-signature heaps); the pairing heap (pairing-heap.ts) serves the ready
// items, which leave from the top.

export abstract class IndexedHeap<T> {
  /** The entries in heap order: a walk may read them (children of `at` are 2at+1, 2at+2). */
  readonly entries: T[] = [];

  /** Strict order: `a` comes before `b`. */
  protected abstract less(a: T, b: T): boolean;
  /** Record `entry`'s position (-1: out of the heap). */
  protected abstract setAt(entry: T, at: number): void;

  get size(): number {
    return this.entries.length;
  }

  peek(): T | undefined {
    return this.entries[0];
  }

  push(entry: T): void {
    this.entries.push(entry);
    this.siftUp(this.entries.length - 1);
  }

  /** The entry at `at` has a new key, better or worse: it moves to its place. */
  update(at: number): void {
    this.siftDown(this.siftUp(at));
  }

  /** The entry at `at` leaves the heap. */
  removeAt(at: number): void {
    const entries = this.entries;
    const gone = entries[at] as T;
    this.setAt(gone, -1);
    const last = entries.pop() as T;
    if (last === gone) return;
    entries[at] = last;
    this.update(at);
  }

  /** Moves the entry at `at` up to its place; returns where it ends. */
  siftUp(at: number): number {
    const entries = this.entries;
    const entry = entries[at] as T;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = entries[parent] as T;
      if (!this.less(entry, above)) break;
      entries[at] = above;
      this.setAt(above, at);
      at = parent;
    }
    entries[at] = entry;
    this.setAt(entry, at);
    return at;
  }

  /** Moves the entry at `at` down to its place; returns where it ends. */
  siftDown(at: number): number {
    const entries = this.entries;
    const count = entries.length;
    const entry = entries[at] as T;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= count) break;
      const right = child + 1;
      if (right < count && this.less(entries[right] as T, entries[child] as T)) child = right;
      const below = entries[child] as T;
      if (!this.less(below, entry)) break;
      entries[at] = below;
      this.setAt(below, at);
      at = child;
    }
    entries[at] = entry;
    this.setAt(entry, at);
    return at;
  }
}
