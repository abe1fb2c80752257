// The binary encoding of the persisted records (record.ts), hand-written for
// fast decode: recovery decodes every stored item at start. This file holds
// the public encode/decode entry points, the version-reader table, outcome
// and meta encoding, the item tail every version shares, and (alone, per
// tidy.test.ts) the MessagePack coding of an item's `requires` map. The
// current item layout lives in item-record-v3.ts, readers kept for older
// versions in record-readers-legacy.ts, shared codes in record-format.ts.
//
// Every value starts with two bytes: the record version (RECORD_VERSION when
// written) and the record kind (item, outcome, meta), so a value from another
// program or of the wrong kind is refused rather than misread. Decoding looks
// the version up in `recordReaders`; when the shape changes, bump
// RECORD_VERSION, write the new reader, and keep the old one in the table
// (converting to the current shape) so existing data dirs still load.
//
// Layouts other than the item (numbers big-endian; str = u32 length + bytes):
//   outcome: u8 version, u8 kind=2, u8 outcome, f64 endedAtMs, str ns
//   meta:    u8 version, u8 kind=3, u32 formatVersion, u32 shards,
//            f64 keysReservedBelow, u32 boots, str nodeId
//   pause:   u8 version, u8 kind=4, u8 flags (1 = has untilMs),
//            f64 untilMs (0 without the flag), str ns, str topic
// Outcomes are the same in every version; meta version 1 lacks boots; pause
// records exist from version 3 on (a version 1 or 2 reader refuses one).

import { Decoder, Encoder } from "@msgpack/msgpack";
import { assert } from "../lib/assert.ts";
import { ByteReader, ByteWriter } from "./byte-cursor.ts";
import { RECORD_VERSION } from "./record.ts";
import type { ItemRecord, MetaRecord, OutcomeRecord, PauseRecord } from "./record.ts";
import { assertItemRecord, assertMetaRecord, assertOutcomeRecord, assertPauseRecord } from "./record-check.ts";
import { RecordDecodeError, RecordKind, itemFlag, outcomeCodes } from "./record-format.ts";
import type { ItemHead } from "./record-format.ts";
import { appendItemFieldsV3, readItemHeadV3 } from "./item-record-v3.ts";
import { readItemHeadV1, readItemHeadV2, readMetaV1 } from "./record-readers-legacy.ts";

// Re-exported so callers keep importing the record encoding from one place.
export { RecordDecodeError, RecordKind } from "./record-format.ts";
export { ItemStatePatch, appendItemValue, itemShapeFlags, itemValueBytes, patchItemState } from "./item-record-v3.ts";

// One encoder, decoder and scratch writer, reused: building them per record
// costs more than the encoding itself.
const writer = new ByteWriter();
const requiresEncoder = new Encoder();
const requiresDecoder = new Decoder();

export function encodeItemRecord(record: ItemRecord): Uint8Array {
  writer.reset();
  appendItemRecord(writer, record);
  return writer.finish();
}

/** Check the record, then append its value (current version) to `to`. */
export function appendItemRecord(to: ByteWriter, record: ItemRecord): void {
  assertItemRecord(record);
  appendItemFieldsV3(to, record, record.requires === null ? null : requiresEncoder.encode(record.requires));
}

export function encodeOutcomeRecord(record: OutcomeRecord): Uint8Array {
  writer.reset();
  appendOutcomeRecord(writer, record);
  return writer.finish();
}

/** Check the record, then append its value (current version) to `to`. */
export function appendOutcomeRecord(to: ByteWriter, record: OutcomeRecord): void {
  assertOutcomeRecord(record);
  to.u8(RECORD_VERSION);
  to.u8(RecordKind.outcome);
  to.u8(outcomeCodes.indexOf(record.outcome));
  to.f64(record.endedAtMs);
  to.string(record.ns);
}

export function encodeMetaRecord(record: MetaRecord): Uint8Array {
  assertMetaRecord(record);
  writer.reset();
  writer.u8(RECORD_VERSION);
  writer.u8(RecordKind.meta);
  writer.u32(record.formatVersion);
  writer.u32(record.shards);
  writer.f64(record.keysReservedBelow);
  writer.u32(record.boots);
  writer.string(record.nodeId);
  return writer.finish();
}

/** Flag bit of a pause record: the pause ends by itself at untilMs. */
const pauseHasUntil = 1;

export function encodePauseRecord(record: PauseRecord): Uint8Array {
  assertPauseRecord(record);
  writer.reset();
  writer.u8(RECORD_VERSION);
  writer.u8(RecordKind.pause);
  writer.u8(record.untilMs === null ? 0 : pauseHasUntil);
  writer.f64(record.untilMs ?? 0);
  writer.string(record.ns);
  writer.string(record.topic);
  return writer.finish();
}

/** The readers of one record version; each returns the current shape. */
export interface RecordReaders {
  /** With `withBytes` false, payload and metadata are skipped and read as `noBytes`. */
  item(reader: ByteReader, withBytes: boolean): ItemRecord;
  outcome(reader: ByteReader): OutcomeRecord;
  meta(reader: ByteReader): MetaRecord;
  pause(reader: ByteReader): PauseRecord;
}

function readItemV1(reader: ByteReader, withBytes: boolean): ItemRecord {
  return readItemTail(reader, readItemHeadV1(reader, scratchHead), withBytes, scratchHead);
}

function readItemV2(reader: ByteReader, withBytes: boolean): ItemRecord {
  return readItemTail(reader, readItemHeadV2(reader, scratchHead), withBytes, scratchHead);
}

function readItemV3(reader: ByteReader, withBytes: boolean): ItemRecord {
  return readItemTail(reader, readItemHeadV3(reader, scratchHead), withBytes, scratchHead);
}

/** One ItemHead, reused: decoding is synchronous and recovery decodes a million records. */
const scratchHead: ItemHead = {
  priority: 0,
  enqueuedAtMs: 0,
  deliverAtMs: 0,
  leaseMs: 0,
  ttlExpiresAtMs: null,
  maxAttempts: 0,
  attempt: 0,
  deliveries: 0,
  leaseBoot: 0,
  state: "pending",
  leaseExpiresAtMs: null,
};

/**
 * The payload and metadata of a record decoded without its bytes: one shared
 * zero-length array (frozen by convention: nobody writes into a decoded record's bytes).
 */
export const noBytes: Uint8Array = new Uint8Array(0);

// The last namespace and topic names decoded: consecutive records almost always repeat them.
let lastNs = "";
let lastTopic = "";

/** From ns on, every version is the same. */
function readItemTail(reader: ByteReader, flags: number, withBytes: boolean, head: ItemHead): ItemRecord {
  const ns = reader.stringReusing(lastNs);
  lastNs = ns;
  const topic = reader.stringReusing(lastTopic);
  lastTopic = topic;
  let payload = noBytes;
  let metadata = noBytes;
  if (withBytes) {
    payload = reader.byteString();
    metadata = reader.byteString();
  } else {
    reader.skipByteString();
    reader.skipByteString();
  }
  const deadReason = flags & itemFlag.deadReason ? reader.string() : null;
  const requires = flags & itemFlag.requires ? (requiresDecoder.decode(reader.byteView()) as Record<string, unknown>) : null;
  let after: string[] | null = null;
  if (flags & itemFlag.after) {
    const count = reader.u32();
    // Each id takes at least its 4-byte length: a count beyond that is damage, not data.
    if (count * 4 > reader.remaining) throw new RecordDecodeError("item record: after count exceeds the value");
    after = [];
    for (let index = 0; index < count; index++) after.push(reader.string());
  }
  const key = flags & itemFlag.key ? reader.string() : null;
  return {
    ns,
    topic,
    priority: head.priority,
    payload,
    metadata,
    enqueuedAtMs: head.enqueuedAtMs,
    deliverAtMs: head.deliverAtMs,
    leaseMs: head.leaseMs,
    ttlExpiresAtMs: head.ttlExpiresAtMs,
    delivery: flags & itemFlag.atMostOnce ? "at_most_once" : "at_least_once",
    maxAttempts: head.maxAttempts,
    attempt: head.attempt,
    deliveries: head.deliveries,
    leaseBoot: head.leaseBoot,
    state: head.state,
    leaseExpiresAtMs: head.leaseExpiresAtMs,
    deadReason,
    requires,
    after,
    key,
  };
}

function readOutcomeV1(reader: ByteReader): OutcomeRecord {
  const outcome = outcomeCodes[reader.u8()];
  if (outcome === undefined) throw new RecordDecodeError("outcome record: unknown outcome code");
  const endedAtMs = reader.f64();
  const ns = reader.string();
  return { ns, outcome, endedAtMs };
}

/** Meta version 2, the current one (version 1: record-readers-legacy.ts). */
function readMetaV2(reader: ByteReader): MetaRecord {
  const formatVersion = reader.u32();
  const shards = reader.u32();
  const keysReservedBelow = reader.f64();
  const boots = reader.u32();
  const nodeId = reader.string();
  return { formatVersion, shards, nodeId, keysReservedBelow, boots };
}

/** Pause version 1 (written from record version 3 on). */
function readPauseV1(reader: ByteReader): PauseRecord {
  const flags = reader.u8();
  if ((flags & ~pauseHasUntil) !== 0) throw new RecordDecodeError(`pause record: unknown flags ${flags}`);
  const untilMs = reader.f64();
  const ns = reader.string();
  const topic = reader.string();
  return { ns, topic, untilMs: flags & pauseHasUntil ? untilMs : null };
}

/** Record versions written before pauses existed hold none: a pause value claiming one is damage. */
function noPauseRecords(version: number): (reader: ByteReader) => PauseRecord {
  return () => {
    throw new RecordDecodeError(`record version ${version} has no pause records`);
  };
}

/** Readers by record version. Keep every version that may exist on disk. */
export const recordReaders: ReadonlyMap<number, RecordReaders> = new Map([
  [1, { item: readItemV1, outcome: readOutcomeV1, meta: readMetaV1, pause: noPauseRecords(1) }],
  [2, { item: readItemV2, outcome: readOutcomeV1, meta: readMetaV2, pause: noPauseRecords(2) }],
  [3, { item: readItemV3, outcome: readOutcomeV1, meta: readMetaV2, pause: readPauseV1 }],
]);
assert(recordReaders.has(RECORD_VERSION), "record codec: no reader for RECORD_VERSION");

function open(bytes: Uint8Array, kind: RecordKind, readers: ReadonlyMap<number, RecordReaders>, length = bytes.length): [ByteReader, RecordReaders] {
  if (length < 2) throw new RecordDecodeError(`record of ${length} bytes is too short`);
  const version = bytes[0] as number;
  const versionReaders = readers.get(version);
  if (versionReaders === undefined) {
    throw new RecordDecodeError(`record version ${version} is unknown (this build reads ${[...readers.keys()].join(", ")})`);
  }
  if (bytes[1] !== kind) throw new RecordDecodeError(`record kind ${bytes[1]} where kind ${kind} was expected`);
  return [new ByteReader(bytes, 2, length), versionReaders];
}

function finish(reader: ByteReader, what: string): void {
  if (reader.remaining !== 0) throw new RecordDecodeError(`${what} record has ${reader.remaining} trailing bytes`);
}

/**
 * Decode an item record. With `withBytes` false its payload and metadata are
 * `noBytes` (recovery: the engine reads them back only when it needs them).
 */
export function decodeItemRecord(bytes: Uint8Array, readers = recordReaders, withBytes = true, length = bytes.length): ItemRecord {
  // `length` bounds the value when `bytes` is a larger shared buffer (lmdb-store.ts's recovery decoder).
  const [reader, versionReaders] = open(bytes, RecordKind.item, readers, length);
  const record = versionReaders.item(reader, withBytes);
  finish(reader, "item");
  assertItemRecord(record);
  return record;
}

export function decodeOutcomeRecord(bytes: Uint8Array, readers = recordReaders): OutcomeRecord {
  const [reader, versionReaders] = open(bytes, RecordKind.outcome, readers);
  const record = versionReaders.outcome(reader);
  finish(reader, "outcome");
  assertOutcomeRecord(record);
  return record;
}

export function decodeMetaRecord(bytes: Uint8Array, readers = recordReaders): MetaRecord {
  const [reader, versionReaders] = open(bytes, RecordKind.meta, readers);
  const record = versionReaders.meta(reader);
  finish(reader, "meta");
  assertMetaRecord(record);
  return record;
}

export function decodePauseRecord(bytes: Uint8Array, readers = recordReaders): PauseRecord {
  const [reader, versionReaders] = open(bytes, RecordKind.pause, readers);
  const record = versionReaders.pause(reader);
  finish(reader, "pause");
  assertPauseRecord(record);
  return record;
}
