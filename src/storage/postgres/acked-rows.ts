// Acked items in PostgreSQL. The engine hands a commit's acked items over as
// one acked-log record (storage/acked-log.ts); the LMDB store writes it as
// such, but here outcomes live per shard (orq_outcomes, with the shard), so
// that a shard's new owner loads its outcomes with its items. Each acked item
// becomes an outcome row, and a purge (CommitBatch.ackedPurgeBeforeMs)
// deletes the rows this process wrote whose end is before the bound, oldest
// first, at most purgeRecordsPerCommitMax x 100 per commit. Rows written
// before a restart or a move come back as ordinary outcomes, which the engine
// retains and deletes one by one.

import { ackedOutcomeBounds } from "../../limits.ts";
import type { OutcomeRecord } from "../record.ts";
import type { CommitBatch } from "../store.ts";

/** Rows one purge may delete: a commit's share of the purge stays bounded. */
const purgeRowsPerCommitMax = ackedOutcomeBounds.purgeRecordsPerCommitMax * 100;
/** Purged entries at the head before the arrays are compacted (1,024), and then only once they are half: a copy per purge would cost more than it frees. */
const compactHeadMin = 1024;

export class AckedRows {
  /** Ids written by this process, in commit order, with their end time: what a purge deletes. */
  private ids: string[] = [];
  private endedAtMs: number[] = [];
  private head = 0;

  /** The batch's outcome writes with its acked items added as outcome rows and its purge as deletions. */
  outcomeWrites(batch: CommitBatch): Array<{ id: string; record: OutcomeRecord | null }> {
    const acked = batch.acked ?? null;
    const purgeBeforeMs = batch.ackedPurgeBeforeMs ?? null;
    if (acked === null && purgeBeforeMs === null) return batch.outcomes;
    const writes = [...batch.outcomes];
    if (purgeBeforeMs !== null) {
      let purged = 0;
      while (this.head < this.ids.length && purged < purgeRowsPerCommitMax && (this.endedAtMs[this.head] as number) < purgeBeforeMs) {
        writes.push({ id: this.ids[this.head] as string, record: null });
        this.head++;
        purged++;
      }
      if (this.head > compactHeadMin && this.head * 2 > this.ids.length) {
        this.ids = this.ids.slice(this.head);
        this.endedAtMs = this.endedAtMs.slice(this.head);
        this.head = 0;
      }
    }
    if (acked !== null) {
      for (let i = 0; i < acked.keys.length; i++) {
        const id = `${acked.shards[i]}:${acked.keys[i]}`;
        writes.push({ id, record: { ns: acked.namespaces[acked.nsIndexes[i] as number] as string, outcome: "acked", endedAtMs: acked.endedAtMs } });
        this.ids.push(id);
        this.endedAtMs.push(acked.endedAtMs);
      }
    }
    return writes;
  }
}
