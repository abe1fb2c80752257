// The acked log: how acked items are remembered on disk for
// outcome_retention_ms. Acks are the hot path and the commonest end, so they
// are not stored one outcome record per item (about 50 bytes with its key,
// plus a delete when retention ends). A record holds the acked keys of one or
// more commits as runs of consecutive keys: keys are allocated by one counter
// for the whole store, so a drain acks long runs and a record costs bytes per
// run, not per item (at 3 bytes an item, 20,000 acks/s grow the file ~300 MiB
// per hour of retention: docs/decisions/003-acked-log.md). The LMDB store
// rewrites one open record while it is small and young (AckedLogBuilder,
// ackedOutcomeBounds), so the log grows by a few bytes a commit. A record is
// removed whole once its newest entry is older than the retention
// (CommitBatch.ackedPurgeBeforeMs).
// Other outcomes (cancelled, expired) stay per-item OutcomeRecords.
//
// Shards are not stored: a key is unique in the store whatever its shard, so
// an acked key alone answers `get` and `after` (docs/SEMANTICS.md,
// engine/outcomes/acked-outcomes.ts).
//
// Layout, version 2: u8 kind (4), u8 version (2), f64 endedAtMs (the newest
// end in the record), u32 namespace count, each namespace as a string, then
// runs to the end of the record, by namespace and in key order within one:
// varint namespace index, zigzag varint of the run's first key minus the
// previous run's end (the first from 0), varint run length minus 1. The
// builder merges keys into runs across commits, whatever order they come in,
// so a record's size follows the gaps between acked keys. Version 1 (per entry: varint namespace index, varint shard,
// varint key delta, after a u32 entry count) is still read.

import { assert } from "../lib/assert.ts";
import { ByteReader, type ByteWriter } from "./byte-cursor.ts";
import { RecordDecodeError } from "./record-format.ts";
import type { ItemKey } from "./item-key.ts";

const ACKED_LOG_KIND = 4;
/** Bump on any change of the layout above, keeping a reader for the old one. */
const ACKED_LOG_VERSION = 2;

/** One commit's acked items, columnar (no object per entry). */
export interface AckedLogRecord {
  /** The newest end in the record: retention of the whole record counts from it. */
  endedAtMs: number;
  namespaces: string[];
  /** Per entry: index into `namespaces`, and key. Same length. */
  nsIndexes: number[];
  /** Per entry, the item's shard as the engine hands it over (the PostgreSQL store keys rows by id); empty when read back from the log, which does not keep shards. */
  shards: number[];
  keys: ItemKey[];
}

export function emptyAckedLog(): AckedLogRecord {
  return { endedAtMs: 0, namespaces: [], nsIndexes: [], shards: [], keys: [] };
}

/**
 * One acked-log record being built from one or more commits' acked items:
 * per namespace, sorted disjoint key intervals, merged as keys arrive in any
 * order, so a record's size follows the gaps between acked keys, not the
 * number of commits or items. mark()/rollback() undo the last additions when
 * their commit fails.
 */
export class AckedLogBuilder {
  endedAtMs = 0;
  /** The oldest commit's end in the record (how long the record has been open). */
  firstEndedAtMs = -1;
  /** Acked items added (a repeated key counts again). */
  count = 0;
  /** Bytes of the last encode() (0 before one): what the store checks against logRecordBytesMax. */
  encodedBytes = 0;
  private namespaces: string[] = [];
  /** Per namespace: interval starts and ends (exclusive), ascending and disjoint, not touching. */
  private starts: number[][] = [];
  private ends: number[][] = [];
  private saved: { endedAtMs: number; firstEndedAtMs: number; count: number; encodedBytes: number; namespaces: string[]; starts: number[][]; ends: number[][] } | null = null;

  get empty(): boolean {
    return this.count === 0;
  }

  add(record: AckedLogRecord): void {
    const count = record.keys.length;
    assert(count > 0 && record.nsIndexes.length === count, "acked log: ragged or empty record");
    assert(Number.isFinite(record.endedAtMs) && record.endedAtMs >= 0, "acked log: bad endedAtMs");
    const nsMap = record.namespaces.map((name) => {
      let at = this.namespaces.indexOf(name);
      if (at < 0) {
        at = this.namespaces.length;
        this.namespaces.push(name);
        this.starts.push([]);
        this.ends.push([]);
      }
      return at;
    });
    for (let i = 0; i < count; i++) {
      const key = record.keys[i] as number;
      assert(Number.isSafeInteger(key) && key >= 0, "acked log: unsafe key");
      const ns = nsMap[record.nsIndexes[i] as number];
      assert(ns !== undefined, "acked log: namespace index out of range");
      insertKey(this.starts[ns] as number[], this.ends[ns] as number[], key);
    }
    this.count += count;
    if (record.endedAtMs > this.endedAtMs) this.endedAtMs = record.endedAtMs;
    if (this.firstEndedAtMs < 0) this.firstEndedAtMs = record.endedAtMs;
  }

  /** The whole record, as stored. */
  encode(to: ByteWriter): void {
    assert(this.count > 0, "acked log: empty record");
    const from = to.length;
    to.u8(ACKED_LOG_KIND);
    to.u8(ACKED_LOG_VERSION);
    to.f64(this.endedAtMs);
    to.u32(this.namespaces.length);
    for (const ns of this.namespaces) to.string(ns);
    let previousEnd = 0;
    for (let ns = 0; ns < this.namespaces.length; ns++) {
      const starts = this.starts[ns] as number[];
      const ends = this.ends[ns] as number[];
      for (let i = 0; i < starts.length; i++) {
        const start = starts[i] as number;
        const delta = start - previousEnd;
        writeVarint(to, ns);
        writeVarint(to, delta >= 0 ? delta * 2 : -delta * 2 - 1);
        writeVarint(to, (ends[i] as number) - start - 1);
        previousEnd = ends[i] as number;
      }
    }
    this.encodedBytes = to.length - from;
  }

  /** Remember the state, so rollback() can undo what is added after. */
  mark(): void {
    this.saved = {
      endedAtMs: this.endedAtMs,
      firstEndedAtMs: this.firstEndedAtMs,
      count: this.count,
      encodedBytes: this.encodedBytes,
      namespaces: [...this.namespaces],
      starts: this.starts.map((list) => [...list]),
      ends: this.ends.map((list) => [...list]),
    };
  }

  rollback(): void {
    const saved = this.saved;
    assert(saved !== null, "acked log: rollback without a mark");
    this.endedAtMs = saved.endedAtMs;
    this.firstEndedAtMs = saved.firstEndedAtMs;
    this.count = saved.count;
    this.encodedBytes = saved.encodedBytes;
    this.namespaces = saved.namespaces;
    this.starts = saved.starts;
    this.ends = saved.ends;
    this.saved = null;
  }

  /** Start an empty record. */
  clear(): void {
    this.endedAtMs = 0;
    this.firstEndedAtMs = -1;
    this.count = 0;
    this.encodedBytes = 0;
    this.namespaces = [];
    this.starts = [];
    this.ends = [];
    this.saved = null;
  }
}

/** Add a key to sorted disjoint intervals, extending or joining neighbours (keys mostly arrive at or near the end). */
function insertKey(starts: number[], ends: number[], key: number): void {
  // The first interval whose end is at or past the key (an end equal to the key can extend to it).
  let low = 0;
  let high = starts.length;
  if (high > 0 && (ends[high - 1] as number) < key) low = high;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((ends[mid] as number) < key) low = mid + 1;
    else high = mid;
  }
  if (low < starts.length && (starts[low] as number) <= key) {
    if (key < (ends[low] as number)) return; // already in
    // key === end: extend, joining the next interval when it now touches.
    ends[low] = key + 1;
    if (low + 1 < starts.length && starts[low + 1] === key + 1) {
      ends[low] = ends[low + 1] as number;
      starts.splice(low + 1, 1);
      ends.splice(low + 1, 1);
    }
    return;
  }
  if (low < starts.length && starts[low] === key + 1) {
    starts[low] = key;
    return;
  }
  starts.splice(low, 0, key);
  ends.splice(low, 0, key + 1);
}

/** One commit's acked items as one record of its own (the memory store; tests). */
export function appendAckedLog(to: ByteWriter, record: AckedLogRecord): void {
  const builder = new AckedLogBuilder();
  builder.add(record);
  builder.encode(to);
}

export function decodeAckedLog(bytes: Uint8Array): AckedLogRecord {
  const nsIndexes: number[] = [];
  const keys: number[] = [];
  const { endedAtMs, namespaces } = visitAckedLog(bytes, (nsIndex, start, length) => {
    for (let key = start; key < start + length; key++) {
      nsIndexes.push(nsIndex);
      keys.push(key);
    }
  });
  return { endedAtMs, namespaces, nsIndexes, shards: [], keys };
}

/**
 * Reads a record's runs without expanding them into keys: `run` gets each
 * run of consecutive acked keys (a version-1 entry is a run of one), in the
 * record's order. Returns the record's header.
 */
export function visitAckedLog(
  bytes: Uint8Array,
  run: (nsIndex: number, start: ItemKey, length: number) => void,
): { endedAtMs: number; namespaces: string[] } {
  const reader = new ByteReader(bytes);
  const kind = reader.u8();
  const version = reader.u8();
  if (kind !== ACKED_LOG_KIND) throw new RecordDecodeError(`acked log: record kind ${kind}, expected ${ACKED_LOG_KIND}`);
  if (version !== 1 && version !== ACKED_LOG_VERSION) throw new RecordDecodeError(`acked log: version ${version} is not one this build reads`);
  const endedAtMs = reader.f64();
  const nsCount = reader.u32();
  const namespaces: string[] = [];
  for (let i = 0; i < nsCount; i++) namespaces.push(reader.string());
  const readNs = () => {
    const nsIndex = readVarint(reader);
    if (nsIndex >= nsCount) throw new RecordDecodeError(`acked log: namespace index ${nsIndex} of ${nsCount}`);
    return nsIndex;
  };
  if (version === 1) {
    const count = reader.u32();
    let key = 0;
    for (let i = 0; i < count; i++) {
      const nsIndex = readNs();
      readVarint(reader); // the shard, which version 2 no longer keeps
      key += readVarint(reader);
      run(nsIndex, key, 1);
    }
  } else {
    let previousEnd = 0;
    while (reader.remaining > 0) {
      const nsIndex = readNs();
      const zigzag = readVarint(reader);
      const start = previousEnd + (zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2);
      const length = readVarint(reader) + 1;
      if (start < 0 || !Number.isSafeInteger(start + length)) throw new RecordDecodeError(`acked log: run of ${length} from ${start}`);
      run(nsIndex, start, length);
      previousEnd = start + length;
    }
  }
  if (reader.remaining !== 0) throw new RecordDecodeError(`acked log: ${reader.remaining} trailing bytes`);
  return { endedAtMs, namespaces };
}

/** The record's endedAtMs without decoding the rest (purging reads only this). */
export function ackedLogEndedAtMs(bytes: Uint8Array): number {
  const reader = new ByteReader(bytes);
  if (reader.u8() !== ACKED_LOG_KIND) throw new RecordDecodeError("acked log: not an acked log record");
  reader.u8();
  return reader.f64();
}

/** Unsigned LEB128, up to 2^53: 7 bits a byte, low first. */
function writeVarint(to: ByteWriter, value: number): void {
  assert(Number.isSafeInteger(value) && value >= 0, "acked log: varint of a negative or unsafe number");
  let rest = value;
  while (rest >= 0x80) {
    to.u8((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  to.u8(rest);
}

function readVarint(reader: ByteReader): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 8; i++) {
    const byte = reader.u8();
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return value;
    scale *= 0x80;
  }
  throw new RecordDecodeError("acked log: varint longer than 8 bytes");
}
