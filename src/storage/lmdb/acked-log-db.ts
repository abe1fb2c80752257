// The LMDB store's acked log (sub-database `acked`, keys: record numbers in
// commit order; storage/acked-log.ts has the record layout). One record is
// open at a time: each commit that acks adds its keys to it and rewrites it
// under the same number, until it reaches ackedOutcomeBounds.logRecordBytesMax
// or has been open blockSpanMs; then the next ack starts the next number. A
// reopen starts a new record. A failed commit's additions are undone, so the
// open record in memory always matches what the next commit builds on.

import type { Database } from "lmdb";
import { ackedOutcomeBounds } from "../../limits.ts";
import { AckedLogBuilder, type AckedLogRecord, ackedLogEndedAtMs, decodeAckedLog } from "../acked-log.ts";
import type { ByteWriter } from "../byte-cursor.ts";

/** A commit's acked-log part: the open record's bytes in the slab (start -1: none), its number, and the purge bound. */
export interface AckedWrite {
  start: number;
  end: number;
  /** The open record's number; -1 once a purge removed it. */
  seq: number;
  startsRecord: boolean;
  purgeBeforeMs: number | null;
}

export class AckedLogDb {
  /** The next record number (one past the last). */
  private nextSeq: number;
  private readonly open = new AckedLogBuilder();
  /** The open record's number, or -1 when the next ack starts one. */
  private openSeq = -1;

  constructor(private readonly db: Database<Uint8Array, number>) {
    let lastSeq = -1;
    for (const key of db.getKeys({ reverse: true, limit: 1 })) lastSeq = key;
    this.nextSeq = lastSeq + 1;
  }

  *load(): Iterable<AckedLogRecord> {
    for (const value of this.records()) yield decodeAckedLog(value);
  }

  /** The stored records' bytes, oldest first. */
  *records(): Iterable<Uint8Array> {
    for (const { value } of this.db.getRange({})) yield value;
  }

  /** Before the transaction: add the commit's acked keys to the open record and encode it into the slab. */
  prepare(acked: AckedLogRecord | null | undefined, purgeBeforeMs: number | null, slab: ByteWriter): AckedWrite {
    const write: AckedWrite = { start: -1, end: -1, seq: this.openSeq, startsRecord: false, purgeBeforeMs };
    if (acked == null) return write;
    const open = this.open;
    const full = open.encodedBytes >= ackedOutcomeBounds.logRecordBytesMax || acked.endedAtMs - open.firstEndedAtMs >= ackedOutcomeBounds.blockSpanMs;
    if (this.openSeq < 0 || full) {
      open.clear();
      write.seq = this.nextSeq;
      write.startsRecord = true;
    }
    open.mark();
    open.add(acked);
    write.start = slab.length;
    open.encode(slab);
    write.end = slab.length;
    return write;
  }

  /** Inside the write transaction (views into the slab are taken once it is complete). */
  apply(write: AckedWrite, slab: ByteWriter): void {
    if (write.start >= 0) this.db.putSync(write.seq, slab.written(write.start, write.end));
    if (write.purgeBeforeMs !== null && this.purge(write.purgeBeforeMs, write.seq)) write.seq = -1;
  }

  committed(write: AckedWrite): void {
    if (write.startsRecord && write.seq >= 0) this.nextSeq = write.seq + 1;
    if (write.start >= 0 || write.seq < 0) this.openSeq = write.seq;
    if (this.openSeq < 0) this.open.clear();
  }

  /** The transaction failed: undo the open record's additions; a record this commit started was never written. */
  failed(write: AckedWrite): void {
    if (write.start < 0) return;
    if (write.startsRecord) {
      this.open.clear();
      this.openSeq = -1;
    } else {
      this.open.rollback();
    }
  }

  /**
   * Inside a write transaction: delete records from the front while their
   * newest end is before `beforeMs`, at most purgeRecordsPerCommitMax a
   * commit (the rest go with the next purge). Records are in commit order,
   * so the first one still retained ends the scan. Returns whether it removed
   * the open record `openSeq` (the next ack then starts another).
   */
  private purge(beforeMs: number, openSeq: number): boolean {
    let removedOpen = false;
    for (const { key, value } of this.db.getRange({ limit: ackedOutcomeBounds.purgeRecordsPerCommitMax })) {
      if (ackedLogEndedAtMs(value) >= beforeMs) break;
      this.db.removeSync(key);
      if (key === openSeq) removedOpen = true;
    }
    return removedOpen;
  }
}
