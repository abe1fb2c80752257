// The acked log: how acked items are remembered on disk for
// outcome_retention_ms. Acks are the hot path and the commonest end, so they
// are not stored one outcome record per item (about 50 bytes with its key,
// plus a delete when retention ends, measured as a third of a drained item's
// LMDB writes). Instead one commit writes one log record holding every item
// it acked: keys sorted and delta-encoded as varints, about 3 bytes an item
// when keys run in order. A record is removed whole once its newest entry is
// older than the retention (CommitBatch.ackedPurgeBeforeMs). Other outcomes
// (cancelled, expired) stay per-item OutcomeRecords: they are rare, and may
// replace one another.
//
// Layout, version 1: u8 kind (4), u8 version (1), f64 endedAtMs (the newest
// end in the record), u32 namespace count, each namespace as a string, u32
// entry count, then per entry, in key order: varint namespace index, varint
// shard, varint key delta from the previous entry's key (the first from 0).

import { assert } from "../lib/assert.ts";
import { ByteReader, type ByteWriter } from "./byte-cursor.ts";
import { RecordDecodeError } from "./record-format.ts";
import type { ItemKey } from "./store.ts";

export const ACKED_LOG_KIND = 4;
/** Bump on any change of the layout above, keeping a reader for the old one. */
export const ACKED_LOG_VERSION = 1;

/** One commit's acked items, columnar (no object per entry). */
export interface AckedLogRecord {
  /** The newest end in the record: retention of the whole record counts from it. */
  endedAtMs: number;
  namespaces: string[];
  /** Per entry: index into `namespaces`, shard, key. Same length. */
  nsIndexes: number[];
  shards: number[];
  keys: ItemKey[];
}

export function emptyAckedLog(): AckedLogRecord {
  return { endedAtMs: 0, namespaces: [], nsIndexes: [], shards: [], keys: [] };
}

export function appendAckedLog(to: ByteWriter, record: AckedLogRecord): void {
  const count = record.keys.length;
  assert(count > 0 && record.shards.length === count && record.nsIndexes.length === count, "acked log: ragged or empty record");
  assert(Number.isFinite(record.endedAtMs) && record.endedAtMs >= 0, "acked log: bad endedAtMs");
  to.u8(ACKED_LOG_KIND);
  to.u8(ACKED_LOG_VERSION);
  to.f64(record.endedAtMs);
  to.u32(record.namespaces.length);
  for (const ns of record.namespaces) to.string(ns);
  to.u32(count);
  const order = Array.from({ length: count }, (_, i) => i);
  const keys = record.keys;
  order.sort((a, b) => (keys[a] as number) - (keys[b] as number));
  let previous = 0;
  for (const i of order) {
    const key = keys[i] as number;
    const nsIndex = record.nsIndexes[i] as number;
    assert(Number.isSafeInteger(key) && key >= previous, "acked log: key out of order or unsafe");
    assert(nsIndex >= 0 && nsIndex < record.namespaces.length, "acked log: namespace index out of range");
    varint(to, nsIndex);
    varint(to, record.shards[i] as number);
    varint(to, key - previous);
    previous = key;
  }
}

export function decodeAckedLog(bytes: Uint8Array): AckedLogRecord {
  const reader = new ByteReader(bytes);
  const kind = reader.u8();
  const version = reader.u8();
  if (kind !== ACKED_LOG_KIND) throw new RecordDecodeError(`acked log: record kind ${kind}, expected ${ACKED_LOG_KIND}`);
  if (version !== ACKED_LOG_VERSION) throw new RecordDecodeError(`acked log: version ${version} is not one this build reads`);
  const endedAtMs = reader.f64();
  const nsCount = reader.u32();
  const namespaces: string[] = [];
  for (let i = 0; i < nsCount; i++) namespaces.push(reader.string());
  const count = reader.u32();
  const nsIndexes: number[] = [];
  const shards: number[] = [];
  const keys: number[] = [];
  let key = 0;
  for (let i = 0; i < count; i++) {
    const nsIndex = readVarint(reader);
    if (nsIndex >= nsCount) throw new RecordDecodeError(`acked log: namespace index ${nsIndex} of ${nsCount}`);
    nsIndexes.push(nsIndex);
    shards.push(readVarint(reader));
    key += readVarint(reader);
    keys.push(key);
  }
  if (reader.remaining !== 0) throw new RecordDecodeError(`acked log: ${reader.remaining} trailing bytes`);
  return { endedAtMs, namespaces, nsIndexes, shards, keys };
}

/** The record's endedAtMs without decoding the rest (purging reads only this). */
export function ackedLogEndedAtMs(bytes: Uint8Array): number {
  const reader = new ByteReader(bytes);
  if (reader.u8() !== ACKED_LOG_KIND) throw new RecordDecodeError("acked log: not an acked log record");
  reader.u8();
  return reader.f64();
}

/** Unsigned LEB128, up to 2^53: 7 bits a byte, low first. */
function varint(to: ByteWriter, value: number): void {
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
