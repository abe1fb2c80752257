// What a PostgreSQL store checks in every commit when several nodes share the
// database: the shard rows of the shards the commit writes that still name
// this node with the epoch it claimed are locked FOR SHARE in the commit's
// own transaction (commit-sql.ts), and the commit writes only those shards. A claim
// by another node (UPDATE ... SET epoch = epoch + 1) waits for in-flight
// commits holding the share lock and re-checks its condition afterwards, so
// an old owner's commit is either ordered before the claim or refused,
// whatever the clocks say. The ownership manager (cluster/) implements it.

export interface ShardFence {
  /** This node's id, as stored in orq_shards.owner. */
  readonly nodeId: string;
  /** The epoch this node holds the shard at, or null when it does not own it (then nothing is written). */
  heldEpoch(shard: number): number | null;
  /** A commit found the shard's row changed (claimed by another node): this node lost it. */
  lost(shard: number, detail: string): void;
  /**
   * A commit writing the shard failed, so whether PostgreSQL holds its
   * writes is unknown, while memory already made them (an ack ended its
   * item): this node stops serving the shard, and serves it again only
   * from what PostgreSQL holds (loaded anew when it claims it again).
   */
  suspect(shard: number, detail: string): void;
}

/** Why a shard's writes in a commit were refused by the fence. */
export class ShardFencedError extends Error {
  override name = "ShardFencedError";
  constructor(
    readonly shard: number,
    detail: string,
  ) {
    super(`shard ${shard} is not owned by this node (${detail})`);
  }
}
