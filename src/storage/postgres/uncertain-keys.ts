// Per shard, the keys a failed commit wrote. PostgreSQL may or may not hold
// such a write (a lost COMMIT answer), so the store's copy of the value is
// not known to match the row, and the key's next put is written whole, not
// patched (commit-statements.ts). A committed write of the key makes it
// certain again, and so does a load of its shard.

import type { ItemKey } from "../store.ts";
import type { EncodedCommit } from "./commit-statements.ts";

export class UncertainKeys {
  private readonly byShard = new Map<number, Set<ItemKey>>();

  has(shard: number, key: ItemKey): boolean {
    return this.byShard.get(shard)?.has(key) === true;
  }

  /** The commit failed: every key it wrote is uncertain. */
  failed(encoded: EncodedCommit): void {
    for (const [shard, writes] of encoded.shards) {
      let keys = this.byShard.get(shard);
      if (keys === undefined) {
        keys = new Set();
        this.byShard.set(shard, keys);
      }
      for (const key of writes.keys()) keys.add(key);
    }
  }

  /** The commit landed, except in the `fenced` shards: the keys it wrote are certain. */
  committed(encoded: EncodedCommit, fenced: ReadonlyMap<number, unknown>): void {
    if (this.byShard.size === 0) return;
    for (const [shard, writes] of encoded.shards) {
      const keys = this.byShard.get(shard);
      if (keys === undefined || fenced.has(shard)) continue;
      for (const key of writes.keys()) keys.delete(key);
      if (keys.size === 0) this.byShard.delete(shard);
    }
  }

  /** The shard was loaded anew, or dropped. */
  forgetShard(shard: number): void {
    this.byShard.delete(shard);
  }
}
