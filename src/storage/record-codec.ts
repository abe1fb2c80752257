// The binary encoding of the persisted records (record.ts), hand-written for
// fast decode: recovery decodes every stored item at start.
//
// Every value starts with two bytes: the record version (RECORD_VERSION when
// written) and the record kind (item, outcome, meta), so a value from another
// program or of the wrong kind is refused rather than misread. Decoding looks
// the version up in `recordReaders`; when the shape changes, bump
// RECORD_VERSION, write the new reader, and keep the old one in the table
// (converting to the current shape) so existing data dirs still load.
//
// Version 2 layout (numbers big-endian; str/bytes = u32 length + bytes):
//   item:    u8 version, u8 kind=1, u8 flags, u8 state,
//            f64 priority, f64 enqueuedAtMs, f64 deliverAtMs, f64 leaseMs,
//            [f64 ttlExpiresAtMs], [f64 leaseExpiresAtMs],
//            u32 maxAttempts, u32 attempt, u32 deliveries, u32 leaseBoot,
//            str ns, str topic, bytes payload, bytes metadata,
//            [str deadReason], [bytes requires (MessagePack map)],
//            [u32 count + str... after], [str key]
//            flags: bit0 ttl, bit1 leaseExpires, bit2 deadReason, bit3 requires,
//            bit4 after, bit5 key, bit6 delivery = at_most_once
//   outcome: u8 version, u8 kind=2, u8 outcome, f64 endedAtMs, str ns
//   meta:    u8 version, u8 kind=3, u32 formatVersion, u32 shards,
//            f64 keysReservedBelow, u32 boots, str nodeId
//
// Version 1 (still read): the same without u32 leaseBoot (read as 0) and
// without u32 boots (read as 0); outcomes are unchanged.

import { Decoder, Encoder } from "@msgpack/msgpack";
import { assert } from "../lib/assert.ts";
import { ByteReader, ByteWriter } from "./byte-cursor.ts";
import { RECORD_VERSION } from "./record.ts";
import type { ItemRecord, MetaRecord, Outcome, OutcomeRecord, StoredState } from "./record.ts";
import { assertItemRecord, assertMetaRecord, assertOutcomeRecord } from "./record-check.ts";

export const RecordKind = { item: 1, outcome: 2, meta: 3 } as const;
export type RecordKind = (typeof RecordKind)[keyof typeof RecordKind];

/** A value that is not a record this version of orq can read. */
export class RecordDecodeError extends Error {
  override name = "RecordDecodeError";
}

const itemFlag = {
  ttl: 1,
  leaseExpires: 2,
  deadReason: 4,
  requires: 8,
  after: 16,
  key: 32,
  atMostOnce: 64,
} as const;

const stateCodes: readonly StoredState[] = ["pending", "leased", "dead"];
const outcomeCodes: readonly Outcome[] = ["acked", "cancelled", "expired"];

// One encoder, decoder and scratch writer, reused: building them per record
// costs more than the encoding itself (MEASURED.md).
const writer = new ByteWriter();
const requiresEncoder = new Encoder();
const requiresDecoder = new Decoder();

export function encodeItemRecord(record: ItemRecord): Uint8Array {
  assertItemRecord(record);
  let flags = 0;
  if (record.ttlExpiresAtMs !== null) flags |= itemFlag.ttl;
  if (record.leaseExpiresAtMs !== null) flags |= itemFlag.leaseExpires;
  if (record.deadReason !== null) flags |= itemFlag.deadReason;
  if (record.requires !== null) flags |= itemFlag.requires;
  if (record.after !== null) flags |= itemFlag.after;
  if (record.key !== null) flags |= itemFlag.key;
  if (record.delivery === "at_most_once") flags |= itemFlag.atMostOnce;
  writer.reset();
  writer.u8(RECORD_VERSION);
  writer.u8(RecordKind.item);
  writer.u8(flags);
  writer.u8(stateCodes.indexOf(record.state));
  writer.f64(record.priority);
  writer.f64(record.enqueuedAtMs);
  writer.f64(record.deliverAtMs);
  writer.f64(record.leaseMs);
  if (record.ttlExpiresAtMs !== null) writer.f64(record.ttlExpiresAtMs);
  if (record.leaseExpiresAtMs !== null) writer.f64(record.leaseExpiresAtMs);
  writer.u32(record.maxAttempts);
  writer.u32(record.attempt);
  writer.u32(record.deliveries);
  writer.u32(record.leaseBoot);
  writer.string(record.ns);
  writer.string(record.topic);
  writer.byteString(record.payload);
  writer.byteString(record.metadata);
  if (record.deadReason !== null) writer.string(record.deadReason);
  if (record.requires !== null) writer.byteString(requiresEncoder.encode(record.requires));
  if (record.after !== null) {
    writer.u32(record.after.length);
    for (const id of record.after) writer.string(id);
  }
  if (record.key !== null) writer.string(record.key);
  return writer.finish();
}

export function encodeOutcomeRecord(record: OutcomeRecord): Uint8Array {
  assertOutcomeRecord(record);
  writer.reset();
  writer.u8(RECORD_VERSION);
  writer.u8(RecordKind.outcome);
  writer.u8(outcomeCodes.indexOf(record.outcome));
  writer.f64(record.endedAtMs);
  writer.string(record.ns);
  return writer.finish();
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

/** The readers of one record version; each returns the current shape. */
export interface RecordReaders {
  /** With `withBytes` false, payload and metadata are skipped and read as `noBytes`. */
  item(reader: ByteReader, withBytes: boolean): ItemRecord;
  outcome(reader: ByteReader): OutcomeRecord;
  meta(reader: ByteReader): MetaRecord;
}

function readItemV1(reader: ByteReader, withBytes: boolean): ItemRecord {
  return readItem(reader, false, withBytes);
}

function readItemV2(reader: ByteReader, withBytes: boolean): ItemRecord {
  return readItem(reader, true, withBytes);
}

/**
 * The payload and metadata of a record decoded without its bytes: one shared
 * zero-length array (frozen by convention: nobody writes into a decoded record's bytes).
 */
export const noBytes: Uint8Array = new Uint8Array(0);

// The last namespace and topic names decoded: consecutive records almost always repeat them.
let lastNs = "";
let lastTopic = "";

/** Versions 1 and 2 differ only by leaseBoot after deliveries (a v1 value reads leaseBoot 0). */
function readItem(reader: ByteReader, hasLeaseBoot: boolean, withBytes: boolean): ItemRecord {
  const flags = reader.u8();
  const state = stateCodes[reader.u8()];
  if (state === undefined) throw new RecordDecodeError("item record: unknown state code");
  const priority = reader.f64();
  const enqueuedAtMs = reader.f64();
  const deliverAtMs = reader.f64();
  const leaseMs = reader.f64();
  const ttlExpiresAtMs = flags & itemFlag.ttl ? reader.f64() : null;
  const leaseExpiresAtMs = flags & itemFlag.leaseExpires ? reader.f64() : null;
  const maxAttempts = reader.u32();
  const attempt = reader.u32();
  const deliveries = reader.u32();
  const leaseBoot = hasLeaseBoot ? reader.u32() : 0;
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
    priority,
    payload,
    metadata,
    enqueuedAtMs,
    deliverAtMs,
    leaseMs,
    ttlExpiresAtMs,
    delivery: flags & itemFlag.atMostOnce ? "at_most_once" : "at_least_once",
    maxAttempts,
    attempt,
    deliveries,
    leaseBoot,
    state,
    leaseExpiresAtMs,
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

function readMetaV1(reader: ByteReader): MetaRecord {
  return readMeta(reader, false);
}

function readMetaV2(reader: ByteReader): MetaRecord {
  return readMeta(reader, true);
}

/** Version 2 added boots after keysReservedBelow (a v1 value reads boots 0; the next open makes it 1). */
function readMeta(reader: ByteReader, hasBoots: boolean): MetaRecord {
  const formatVersion = reader.u32();
  const shards = reader.u32();
  const keysReservedBelow = reader.f64();
  const boots = hasBoots ? reader.u32() : 0;
  const nodeId = reader.string();
  return { formatVersion, shards, nodeId, keysReservedBelow, boots };
}

/** Readers by record version. Keep every version that may exist on disk. */
export const recordReaders: ReadonlyMap<number, RecordReaders> = new Map([
  [1, { item: readItemV1, outcome: readOutcomeV1, meta: readMetaV1 }],
  [2, { item: readItemV2, outcome: readOutcomeV1, meta: readMetaV2 }],
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
