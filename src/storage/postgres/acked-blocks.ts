// Acked items in PostgreSQL, compactly: per shard, blocks of acked keys in
// the acked log's record layout (storage/acked-log.ts), one row each in
// orq_acked (shard, seq) -> (ended_at_ms, value). As in the LMDB store
// (lmdb/acked-log-db.ts), one block per shard is open: each commit that acks
// keys of the shard merges them into it and rewrites its row, until it
// reaches ackedOutcomeBounds.logRecordBytesMax or has been open blockSpanMs;
// then the shard's next ack starts a new block. So an ack costs the delete of
// its item row plus a share of one block write per shard and commit, not an
// outcome row per item. Blocks are kept per shard so that a shard's new owner
// loads them with its items (a load starts a new block after the last one).
// A purge (CommitBatch.ackedPurgeBeforeMs) deletes whole blocks whose newest
// end is before the bound, in the shards this process serves, at most
// purgeRecordsPerCommitMax a commit. This process keeps each loaded shard's
// blocks (a few bytes per run of keys) for loadAckedLog.
//
// Acked keys of a shard this process has not loaded are not written: only
// its owner serves (and acks) its items. A failed commit's additions to the
// open blocks are undone, as the LMDB store undoes them.

import { ackedOutcomeBounds } from "../../limits.ts";
import { AckedLogBuilder, type AckedLogRecord, decodeAckedLog } from "../acked-log.ts";
import { ByteWriter } from "../byte-cursor.ts";
import type { CommitBatch } from "../store.ts";
import { type Statement, valueStatement } from "./commit-statements.ts";

export const createAckedTableSql = `CREATE TABLE IF NOT EXISTS orq_acked (
     shard integer NOT NULL,
     seq bigint NOT NULL,
     ended_at_ms double precision NOT NULL,
     value bytea NOT NULL,
     PRIMARY KEY (shard, seq))`;

// Parts of one commit statement (commit-sql.ts), writing only the shards in
// `ok`. A purge leaves alone the blocks the same commit writes: one
// statement may not both update and delete a row.
const upsertBlocksSql = `INSERT INTO orq_acked (shard, seq, ended_at_ms, value)
  SELECT s, q, e, substring($4::bytea FROM o FOR l) FROM unnest($1::integer[], $2::bigint[], $3::float8[], $5::integer[], $6::integer[]) AS v(s, q, e, o, l)
  WHERE v.s IN (SELECT shard FROM ok)
  ON CONFLICT (shard, seq) DO UPDATE SET ended_at_ms = EXCLUDED.ended_at_ms, value = EXCLUDED.value RETURNING 1`;
const purgeBlocksSql = `DELETE FROM orq_acked WHERE (shard, seq) IN (
  SELECT shard, seq FROM orq_acked WHERE shard = ANY($1::integer[]) AND shard IN (SELECT shard FROM ok) AND ended_at_ms < $2::float8
    AND (shard, seq) NOT IN (SELECT * FROM unnest($4::integer[], $5::bigint[]))
  ORDER BY ended_at_ms LIMIT $3)
  RETURNING shard, seq`;

/** The statement reading one shard's blocks, a page at a time from seq $2 on. */
export const loadBlocksSql = "SELECT seq, value FROM orq_acked WHERE shard = $1 AND seq > $2 ORDER BY seq LIMIT $3";

interface ShardBlocks {
  /** The shard's stored blocks by seq, as PostgreSQL holds them. */
  values: Map<number, Uint8Array>;
  open: AckedLogBuilder;
  /** The open block's seq, or -1 when the shard's next ack starts one. */
  openSeq: number;
  nextSeq: number;
}

/** One shard's block write in a commit. */
interface BlockWrite {
  shard: number;
  seq: number;
  startsBlock: boolean;
  /** The block's newest end: what a purge compares. */
  endedAtMs: number;
  value: Uint8Array;
}

/** A commit's acked part: its statements, and what to do once it commits or fails. */
export interface AckedWrite {
  statements: Statement[];
  writes: BlockWrite[];
  /** Index in `statements` of the purge (it returns the deleted blocks as (shard, seq) pairs), or -1. */
  purgeAt: number;
  /** The shards the write touches (for the fence): its blocks' and its purge's. */
  shards: Set<number>;
}

const blockWriter = new ByteWriter();

export class AckedBlocks {
  private readonly shards: Array<ShardBlocks | null>;

  constructor(shardCount: number) {
    this.shards = Array.from({ length: shardCount }, () => null);
  }

  /** A shard's stored blocks (loaded with its items); its next ack starts a new block. */
  adopt(shard: number, rows: ReadonlyArray<{ seq: number; value: Uint8Array }>): void {
    const values = new Map<number, Uint8Array>();
    let nextSeq = 0;
    for (const { seq, value } of rows) {
      values.set(seq, value);
      nextSeq = Math.max(nextSeq, seq + 1);
    }
    this.shards[shard] = { values, open: new AckedLogBuilder(), openSeq: -1, nextSeq };
  }

  drop(shard: number): void {
    this.shards[shard] = null;
  }

  /** The loaded shards' blocks (or one shard's), oldest end first. */
  records(only: number | null = null): AckedLogRecord[] {
    const values: Uint8Array[] = [];
    for (const [at, shard] of this.shards.entries()) {
      if (shard === null || (only !== null && at !== only)) continue;
      for (const value of shard.values.values()) values.push(value);
    }
    return ackedRecordsOf(values);
  }

  /** Blocks held for the loaded shards. */
  count(): number {
    let blocks = 0;
    for (const shard of this.shards) if (shard !== null) blocks += shard.values.size;
    return blocks;
  }

  /** When the commit runs: the batch's acked keys merged into their shards' open blocks, and its purge. */
  prepare(batch: CommitBatch): AckedWrite {
    const write: AckedWrite = { statements: [], writes: [], purgeAt: -1, shards: new Set() };
    const acked = batch.acked ?? null;
    if (acked !== null && acked.keys.length > 0) {
      for (const [shard, part] of byShard(acked)) {
        const blocks = this.shards[shard] ?? null;
        if (blocks === null) continue;
        write.writes.push(this.addToOpen(shard, blocks, part));
        write.shards.add(shard);
      }
      if (write.writes.length > 0) write.statements.push(blocksStatement(write.writes));
    }
    const purgeBeforeMs = batch.ackedPurgeBeforeMs ?? null;
    if (purgeBeforeMs !== null) {
      const shards: number[] = [];
      this.shards.forEach((blocks, shard) => {
        if (blocks !== null && blocks.values.size > 0) shards.push(shard);
      });
      if (shards.length > 0) {
        write.purgeAt = write.statements.length;
        const written = [write.writes.map((w) => w.shard), write.writes.map((w) => w.seq)];
        write.statements.push({ text: purgeBlocksSql, params: [shards, purgeBeforeMs, ackedOutcomeBounds.purgeRecordsPerCommitMax, ...written], returns: "pairs" });
        for (const shard of shards) write.shards.add(shard);
      }
    }
    return write;
  }

  /** The commit went through, except for the `fenced` shards: keep the written blocks, forget the purged ones (`purged`, as the purge returned them). */
  committed(write: AckedWrite, purged: ReadonlyArray<readonly [number, number]>, fenced: ReadonlyMap<number, unknown>): void {
    this.failed(write, fenced);
    for (const { shard, seq, startsBlock, value } of write.writes) {
      const blocks = this.shards[shard];
      if (blocks === null || blocks === undefined || fenced.has(shard)) continue;
      blocks.values.set(seq, value);
      blocks.openSeq = seq;
      if (startsBlock) blocks.nextSeq = seq + 1;
    }
    for (const [shard, seq] of purged) {
      const blocks = this.shards[shard];
      if (blocks === null || blocks === undefined) continue;
      blocks.values.delete(seq);
      if (blocks.openSeq === seq) {
        blocks.openSeq = -1;
        blocks.open.clear();
      }
    }
  }

  /** The commit failed (in the shards `only`, or all): undo its additions to their open blocks (a block it started was never written). */
  failed(write: AckedWrite, only: ReadonlyMap<number, unknown> | null = null): void {
    for (const { shard, startsBlock } of write.writes) {
      const blocks = this.shards[shard];
      if (blocks === null || blocks === undefined || (only !== null && !only.has(shard))) continue;
      if (startsBlock) {
        blocks.open.clear();
        blocks.openSeq = -1;
      } else blocks.open.rollback();
    }
  }

  private addToOpen(shard: number, blocks: ShardBlocks, part: AckedLogRecord): BlockWrite {
    const open = blocks.open;
    const full = open.encodedBytes >= ackedOutcomeBounds.logRecordBytesMax || part.endedAtMs - open.firstEndedAtMs >= ackedOutcomeBounds.blockSpanMs;
    let seq = blocks.openSeq;
    const startsBlock = seq < 0 || full;
    if (startsBlock) {
      open.clear();
      seq = blocks.nextSeq;
    }
    open.mark();
    open.add(part);
    blockWriter.reset();
    open.encode(blockWriter);
    return { shard, seq, startsBlock, endedAtMs: open.endedAtMs, value: blockWriter.finish() };
  }
}

/** One commit's acked record split by shard (the namespaces list shared). */
function byShard(acked: AckedLogRecord): Map<number, AckedLogRecord> {
  const parts = new Map<number, AckedLogRecord>();
  for (let i = 0; i < acked.keys.length; i++) {
    const shard = acked.shards[i] as number;
    let part = parts.get(shard);
    if (part === undefined) {
      part = { endedAtMs: acked.endedAtMs, namespaces: acked.namespaces, nsIndexes: [], shards: [], keys: [] };
      parts.set(shard, part);
    }
    part.nsIndexes.push(acked.nsIndexes[i] as number);
    part.shards.push(shard);
    part.keys.push(acked.keys[i] as number);
  }
  return parts;
}

function blocksStatement(writes: readonly BlockWrite[]): Statement {
  const keys = [writes.map((w) => w.shard), writes.map((w) => w.seq), writes.map((w) => w.endedAtMs)];
  return valueStatement(upsertBlocksSql, keys, writes.map((w) => w.value), []);
}

/** Blocks' values as acked-log records, oldest end first (a loaded shard's, or one read ahead of its claim). */
export function ackedRecordsOf(values: Iterable<Uint8Array>): AckedLogRecord[] {
  const records: AckedLogRecord[] = [];
  for (const value of values) records.push(decodeAckedLog(value));
  return records.sort((a, b) => a.endedAtMs - b.endedAtMs);
}
