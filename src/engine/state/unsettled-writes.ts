// Writes of this engine, by record key, whose commit has not settled yet: the
// pauses' and policies' (ops/pause.ts, groups/group-pauses.ts,
// groups/policy-ops.ts). Cluster mode asks before it applies another node's
// row: a row read while this engine's own write of the same key is on its
// way would be overwritten by that write when it lands.

export class UnsettledWrites {
  /** Per key, writes in commits that have not settled (an entry only while some are). */
  private readonly counts = new Map<string, number>();

  /** Runs a hook once the open write set's commit settles (ItemStates.afterCommit). */
  constructor(private readonly afterCommit: (hook: () => void) => void) {}

  /** A write of `key` joined the open write set: counted until its commit settles. */
  add(key: string): void {
    const counts = this.counts;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    this.afterCommit(() => {
      const left = counts.get(key)! - 1;
      if (left === 0) counts.delete(key);
      else counts.set(key, left);
    });
  }

  has(key: string): boolean {
    return this.counts.has(key);
  }
}
