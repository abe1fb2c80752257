// A string-keyed map split into a fixed number of parts by a hash of the key,
// so that no growth rehashes every entry at once. A JavaScriptCore Map
// doubles its table as it grows, copying every entry in one go: at 786,432
// string keys that copy held the event loop for about 60 ms on the build box
// (45 ms for numbers), once per doubling. A topic's idempotency keys grow to
// a million while a cluster node adopts shards; split 64 ways, the largest
// copy is a 64th of that (decisions/049-item-values-in-pages.md).

/** Parts a SplitMap is split into. */
const parts = 64;

export class SplitMap<V> {
  private readonly maps: Array<Map<string, V>> = Array.from({ length: parts }, () => new Map());

  get size(): number {
    let size = 0;
    for (const map of this.maps) size += map.size;
    return size;
  }

  get(key: string): V | undefined {
    return this.part(key).get(key);
  }

  set(key: string, value: V): void {
    this.part(key).set(key, value);
  }

  delete(key: string): boolean {
    return this.part(key).delete(key);
  }

  /** The part holding `key`: FNV-1a over the key's last 16 UTF-16 units (enough to spread counters and ids), folded to a part. */
  private part(key: string): Map<string, V> {
    let hash = 0x811c9dc5;
    for (let at = Math.max(0, key.length - 16); at < key.length; at++) hash = Math.imul(hash ^ key.charCodeAt(at), 0x01000193);
    return this.maps[(hash ^ (hash >>> 16)) & (parts - 1)] as Map<string, V>;
  }
}
