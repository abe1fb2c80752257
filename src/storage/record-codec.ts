// The binary encoding of the persisted records (record.ts), hand-written for
// fast decode: recovery decodes every stored item at start. This file holds
// the public encode/decode entry points, the version-reader table, outcome
// and meta encoding, the item tail every version shares, and (alone, per
// tidy.test.ts) the MessagePack coding of an item's `requires` map. The
// current item layout lives in item-record.ts, readers kept for older
// versions in record-readers-legacy.ts, shared codes in record-format.ts.
//
// Every value starts with two bytes: the record version (RECORD_VERSION when
// written) and the record kind (item, outcome, meta, pause, policy), so a value from another
// program or of the wrong kind is refused rather than misread. Decoding looks
// the version up in `recordReaders`; when the shape changes, bump
// RECORD_VERSION, write the new reader, and keep the old one in the table
// (converting to the current shape) so existing data dirs still load.
//
// Layouts other than the item (numbers big-endian; str = u32 length + bytes):
//   outcome: u8 version, u8 kind=2, u8 outcome (| 0x80 when a result
//            follows), f64 endedAtMs, str ns, [bytes result]
//   meta:    u8 version, u8 kind=3, u32 formatVersion, u32 shards,
//            f64 keysReservedBelow, u32 boots, str nodeId
//   pause:   u8 version, u8 kind=4, u8 flags (1 = has untilMs, 2 = has group),
//            f64 untilMs (0 without the flag), str ns, str topic, [str group]
//   policy:  u8 version, u8 kind=5, u8 flags (1 = has group, 2 = has weight,
//            4 = has maxLeased, 8 = has rate), f64 weight, f64 maxLeased,
//            f64 rate count, f64 rate perMs (each 0 without its flag),
//            str ns, str topic, [str group]
//   schedule: u8 version, u8 kind=6, u8 flags (1 = cron, else everyMs; 2 = catch up
//            "none", else "one"; 4 = has lastAtMs and lastId), f64 everyMs (0 with
//            cron), f64 anchorMs, f64 lastAtMs (0 without), str ns, str name,
//            str timezone, [str cron], [str lastId], bin item (a MessagePack map)
// Outcomes are the same in every version, but for an optional tail from
// version 5 on (an acked outcome's `ack` result, flagged in the outcome byte,
// so an older reader refuses it as an unknown outcome code rather than
// misreading it); meta version 1 lacks boots; pause
// records exist from version 3 on (a version 1 or 2 reader refuses one;
// version 3's has no group flag), policy records from version 4 on (older
// readers refuse one), schedule records from version 5 on (older readers
// refuse one).

import { Decoder, Encoder } from "@msgpack/msgpack";
import { assert } from "../lib/assert.ts";
import { ByteReader, ByteWriter } from "./byte-cursor.ts";
import { RECORD_VERSION } from "./record.ts";
import type { ItemRecord, MetaRecord, OutcomeRecord, PauseRecord, PolicyRecord, ScheduleRecord } from "./record.ts";
import { assertItemRecord, assertMetaRecord, assertOutcomeRecord, assertPauseRecord, assertPolicyRecord, assertScheduleRecord } from "./record-check.ts";
import { RecordDecodeError, RecordKind, itemFlag, outcomeCodes } from "./record-format.ts";
import type { ItemHead } from "./record-format.ts";
import { appendItemFields, itemExtFlag, readItemHead } from "./item-record.ts";
import { readItemHeadV1, readItemHeadV2, readMetaV1 } from "./record-readers-legacy.ts";

// Re-exported so callers keep importing the record encoding from one place.
export { RecordDecodeError, RecordKind } from "./record-format.ts";
export { ItemStatePatch, appendItemValue, copyItemValue, itemShapeFlags, itemValueBytes, patchItemState } from "./item-record.ts";

// One encoder, decoder and scratch writer, reused: building them per record
// costs more than the encoding itself (measured when the codec was written).
const writer = new ByteWriter();
const requiresEncoder = new Encoder();
const requiresDecoder = new Decoder();

/**
 * The MessagePack bytes of a `requires` or `prefers` map, kept for a frozen
 * one: the request decoder hands items that repeat a map's bytes the same
 * frozen map (protocol/repeated-map-cache.ts), which cannot change. Weak:
 * they go with the map.
 */
const encodedMaps = new WeakMap<object, Uint8Array>();

function encodedMap(map: Record<string, unknown>): Uint8Array {
  if (!Object.isFrozen(map)) return requiresEncoder.encode(map);
  let bytes = encodedMaps.get(map);
  if (bytes === undefined) {
    bytes = requiresEncoder.encode(map);
    encodedMaps.set(map, bytes);
  }
  return bytes;
}

export function encodeItemRecord(record: ItemRecord): Uint8Array {
  writer.reset();
  appendItemRecord(writer, record);
  return writer.finish();
}

/** Check the record, then append its value (current version) to `to`. */
export function appendItemRecord(to: ByteWriter, record: ItemRecord): void {
  assertItemRecord(record);
  const prefers = record.prefers ?? null;
  appendItemFields(to, record, record.requires === null ? null : encodedMap(record.requires), prefers === null ? null : encodedMap(prefers));
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
  const result = record.result ?? null;
  to.u8(outcomeCodes.indexOf(record.outcome) | (result === null ? 0 : outcomeHasResult));
  to.f64(record.endedAtMs);
  to.string(record.ns);
  if (result !== null) to.byteString(result);
}

/** The outcome byte's flag: an acked outcome's result follows the namespace. */
const outcomeHasResult = 0x80;

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

/** Flag bits of a pause record. */
const pauseFlag = {
  /** The pause ends by itself at untilMs. */
  until: 1,
  /** The pause is a group's (from record version 4 on). */
  group: 2,
} as const;

export function encodePauseRecord(record: PauseRecord): Uint8Array {
  assertPauseRecord(record);
  writer.reset();
  writer.u8(RECORD_VERSION);
  writer.u8(RecordKind.pause);
  writer.u8((record.untilMs === null ? 0 : pauseFlag.until) | (record.group === null ? 0 : pauseFlag.group));
  writer.f64(record.untilMs ?? 0);
  writer.string(record.ns);
  writer.string(record.topic);
  if (record.group !== null) writer.string(record.group);
  return writer.finish();
}

/** Flag bits of a policy record: which of its optional fields it holds. */
const policyFlag = { group: 1, weight: 2, maxLeased: 4, rate: 8 } as const;
const policyFlagsAll = policyFlag.group | policyFlag.weight | policyFlag.maxLeased | policyFlag.rate;

export function encodePolicyRecord(record: PolicyRecord): Uint8Array {
  assertPolicyRecord(record);
  writer.reset();
  writer.u8(RECORD_VERSION);
  writer.u8(RecordKind.policy);
  let flags = 0;
  if (record.group !== null) flags |= policyFlag.group;
  if (record.weight !== null) flags |= policyFlag.weight;
  if (record.maxLeased !== null) flags |= policyFlag.maxLeased;
  if (record.rate !== null) flags |= policyFlag.rate;
  writer.u8(flags);
  writer.f64(record.weight ?? 0);
  writer.f64(record.maxLeased ?? 0);
  writer.f64(record.rate?.count ?? 0);
  writer.f64(record.rate?.perMs ?? 0);
  writer.string(record.ns);
  writer.string(record.topic);
  if (record.group !== null) writer.string(record.group);
  return writer.finish();
}

/** Flag bits of a schedule record. */
const scheduleFlag = { cron: 1, catchUpNone: 2, last: 4 } as const;
const scheduleFlagsAll = scheduleFlag.cron | scheduleFlag.catchUpNone | scheduleFlag.last;

export function encodeScheduleRecord(record: ScheduleRecord): Uint8Array {
  assertScheduleRecord(record);
  writer.reset();
  writer.u8(RECORD_VERSION);
  writer.u8(RecordKind.schedule);
  let flags = 0;
  if (record.cron !== null) flags |= scheduleFlag.cron;
  if (record.catchUp === "none") flags |= scheduleFlag.catchUpNone;
  if (record.lastAtMs !== null) flags |= scheduleFlag.last;
  writer.u8(flags);
  writer.f64(record.everyMs ?? 0);
  writer.f64(record.anchorMs);
  writer.f64(record.lastAtMs ?? 0);
  writer.string(record.ns);
  writer.string(record.name);
  writer.string(record.timezone);
  if (record.cron !== null) writer.string(record.cron);
  if (record.lastId !== null) writer.string(record.lastId);
  writer.byteString(requiresEncoder.encode(record.item));
  return writer.finish();
}

/** The readers of one record version; each returns the current shape. */
export interface RecordReaders {
  /** With `withBytes` false, payload and metadata are skipped and read as `noBytes`. */
  item(reader: ByteReader, withBytes: boolean): ItemRecord;
  outcome(reader: ByteReader): OutcomeRecord;
  meta(reader: ByteReader): MetaRecord;
  pause(reader: ByteReader): PauseRecord;
  policy(reader: ByteReader): PolicyRecord;
  schedule(reader: ByteReader): ScheduleRecord;
}

function readItemV1(reader: ByteReader, withBytes: boolean): ItemRecord {
  return readItemTail(reader, withoutGroup(readItemHeadV1(reader, scratchHead), 1), withBytes, scratchHead);
}

function readItemV2(reader: ByteReader, withBytes: boolean): ItemRecord {
  return readItemTail(reader, withoutGroup(readItemHeadV2(reader, scratchHead), 2), withBytes, scratchHead);
}

function readItemV3(reader: ByteReader, withBytes: boolean): ItemRecord {
  return readItemTail(reader, withoutGroup(readItemHead(reader, scratchHead), 3), withBytes, scratchHead);
}

/** Version 4: version 3's layout with an optional group at the end (item-record.ts). */
function readItemV4(reader: ByteReader, withBytes: boolean): ItemRecord {
  return readItemTail(reader, readItemHead(reader, scratchHead), withBytes, scratchHead);
}

/** Version 5, the current one: version 4's layout with an optional extension at the end (item-record.ts). */
function readItemV5(reader: ByteReader, withBytes: boolean): ItemRecord {
  const record = readItemTail(reader, readItemHead(reader, scratchHead), withBytes, scratchHead);
  if (reader.remaining === 0) return record;
  const ext = reader.u8();
  if (ext === 0 || ext & ~(itemExtFlag.prefers | itemExtFlag.preferWaitMs | itemExtFlag.trace)) throw new RecordDecodeError(`item record: extension flags ${ext}`);
  if (ext & itemExtFlag.prefers) record.prefers = requiresDecoder.decode(reader.byteView()) as Record<string, unknown>;
  if (ext & itemExtFlag.preferWaitMs) record.preferWaitMs = reader.f64();
  if (ext & itemExtFlag.trace) record.trace = reader.string();
  return record;
}

/** The flags of an item of a version before groups: the group bit set there is damage, not a group. */
function withoutGroup(flags: number, version: number): number {
  if (flags & itemFlag.group) throw new RecordDecodeError(`item record: version ${version} has no group`);
  return flags;
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

/** From ns on, every version is the same (the group, last, is set only from version 4 on). */
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
  const group = flags & itemFlag.group ? reader.string() : null;
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
    group,
  };
}

/** Versions 1 to 4: no result (the result flag reads as an unknown outcome code). */
function readOutcomeV1(reader: ByteReader): OutcomeRecord {
  const outcome = outcomeCodes[reader.u8()];
  if (outcome === undefined) throw new RecordDecodeError("outcome record: unknown outcome code");
  const endedAtMs = reader.f64();
  const ns = reader.string();
  return { ns, outcome, endedAtMs };
}

/** Version 5, the current one: version 1's layout, with an acked outcome's result after the namespace when flagged. */
function readOutcomeV5(reader: ByteReader): OutcomeRecord {
  const code = reader.u8();
  const outcome = outcomeCodes[code & ~outcomeHasResult];
  if (outcome === undefined) throw new RecordDecodeError("outcome record: unknown outcome code");
  const endedAtMs = reader.f64();
  const ns = reader.string();
  if ((code & outcomeHasResult) === 0) return { ns, outcome, endedAtMs };
  return { ns, outcome, endedAtMs, result: reader.byteString() };
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

/** Pause of record version 3: no group flag (the topic's own pause). */
function readPauseV3(reader: ByteReader): PauseRecord {
  return readPause(reader, pauseFlag.until);
}

/** Pause of record version 4, the current one: a group after the topic when its flag is set. */
function readPauseV4(reader: ByteReader): PauseRecord {
  return readPause(reader, pauseFlag.until | pauseFlag.group);
}

function readPause(reader: ByteReader, knownFlags: number): PauseRecord {
  const flags = reader.u8();
  if ((flags & ~knownFlags) !== 0) throw new RecordDecodeError(`pause record: unknown flags ${flags}`);
  const untilMs = reader.f64();
  const ns = reader.string();
  const topic = reader.string();
  const group = flags & pauseFlag.group ? reader.string() : null;
  return { ns, topic, group, untilMs: flags & pauseFlag.until ? untilMs : null };
}

/** Policy of record version 4, the current one (the first with policies). */
function readPolicyV4(reader: ByteReader): PolicyRecord {
  const flags = reader.u8();
  if ((flags & ~policyFlagsAll) !== 0) throw new RecordDecodeError(`policy record: unknown flags ${flags}`);
  const weight = reader.f64();
  const maxLeased = reader.f64();
  const count = reader.f64();
  const perMs = reader.f64();
  const ns = reader.string();
  const topic = reader.string();
  const group = flags & policyFlag.group ? reader.string() : null;
  return {
    ns,
    topic,
    group,
    weight: flags & policyFlag.weight ? weight : null,
    maxLeased: flags & policyFlag.maxLeased ? maxLeased : null,
    rate: flags & policyFlag.rate ? { count, perMs } : null,
  };
}

/** Schedule of record version 5 (the first with schedules). */
function readScheduleV5(reader: ByteReader): ScheduleRecord {
  const flags = reader.u8();
  if ((flags & ~scheduleFlagsAll) !== 0) throw new RecordDecodeError(`schedule record: unknown flags ${flags}`);
  const everyMs = reader.f64();
  const anchorMs = reader.f64();
  const lastAtMs = reader.f64();
  const ns = reader.string();
  const name = reader.string();
  const timezone = reader.string();
  const cron = flags & scheduleFlag.cron ? reader.string() : null;
  const lastId = flags & scheduleFlag.last ? reader.string() : null;
  const item = requiresDecoder.decode(reader.byteView()) as Record<string, unknown>;
  return {
    ns,
    name,
    cron,
    everyMs: cron === null ? everyMs : null,
    timezone,
    catchUp: flags & scheduleFlag.catchUpNone ? "none" : "one",
    anchorMs,
    lastAtMs: flags & scheduleFlag.last ? lastAtMs : null,
    lastId,
    item,
  };
}

/** Record versions written before a kind existed hold none of it: a value claiming one is damage. */
function noRecords(kind: string, version: number): () => never {
  return () => {
    throw new RecordDecodeError(`record version ${version} has no ${kind} records`);
  };
}

/** Readers by record version. Keep every version that may exist on disk. */
export const recordReaders: ReadonlyMap<number, RecordReaders> = new Map([
  [1, { item: readItemV1, outcome: readOutcomeV1, meta: readMetaV1, pause: noRecords("pause", 1), policy: noRecords("policy", 1), schedule: noRecords("schedule", 1) }],
  [2, { item: readItemV2, outcome: readOutcomeV1, meta: readMetaV2, pause: noRecords("pause", 2), policy: noRecords("policy", 2), schedule: noRecords("schedule", 2) }],
  [3, { item: readItemV3, outcome: readOutcomeV1, meta: readMetaV2, pause: readPauseV3, policy: noRecords("policy", 3), schedule: noRecords("schedule", 3) }],
  [4, { item: readItemV4, outcome: readOutcomeV1, meta: readMetaV2, pause: readPauseV4, policy: readPolicyV4, schedule: noRecords("schedule", 4) }],
  [5, { item: readItemV5, outcome: readOutcomeV5, meta: readMetaV2, pause: readPauseV4, policy: readPolicyV4, schedule: readScheduleV5 }],
]);
assert(recordReaders.has(RECORD_VERSION), "record codec: no reader for RECORD_VERSION");

function open(bytes: Uint8Array, kind: RecordKind, readers: ReadonlyMap<number, RecordReaders>, end = bytes.length, start = 0): [ByteReader, RecordReaders] {
  if (end - start < 2) throw new RecordDecodeError(`record of ${end - start} bytes is too short`);
  const version = bytes[start] as number;
  const versionReaders = readers.get(version);
  if (versionReaders === undefined) {
    throw new RecordDecodeError(`record version ${version} is unknown (this build reads ${[...readers.keys()].join(", ")})`);
  }
  if (bytes[start + 1] !== kind) throw new RecordDecodeError(`record kind ${bytes[start + 1]} where kind ${kind} was expected`);
  return [new ByteReader(bytes, start + 2, end), versionReaders];
}

function finish(reader: ByteReader, what: string): void {
  if (reader.remaining !== 0) throw new RecordDecodeError(`${what} record has ${reader.remaining} trailing bytes`);
}

/**
 * Decode an item record. With `withBytes` false its payload and metadata are
 * `noBytes` (recovery: the engine reads them back only when it needs them).
 */
export function decodeItemRecord(bytes: Uint8Array, readers = recordReaders, withBytes = true, end = bytes.length, start = 0): ItemRecord {
  // `start` and `end` bound the value when `bytes` is a larger shared buffer: lmdb-store.ts's
  // recovery decoder, a page of the PostgreSQL store's values (postgres/shard-values.ts).
  const [reader, versionReaders] = open(bytes, RecordKind.item, readers, end, start);
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

export function decodePolicyRecord(bytes: Uint8Array, readers = recordReaders): PolicyRecord {
  const [reader, versionReaders] = open(bytes, RecordKind.policy, readers);
  const record = versionReaders.policy(reader);
  finish(reader, "policy");
  assertPolicyRecord(record);
  return record;
}

export function decodeScheduleRecord(bytes: Uint8Array, readers = recordReaders): ScheduleRecord {
  const [reader, versionReaders] = open(bytes, RecordKind.schedule, readers);
  const record = versionReaders.schedule(reader);
  finish(reader, "schedule");
  assertScheduleRecord(record);
  return record;
}
