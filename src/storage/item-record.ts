// The current (version 4) item value layout: writing it, reading its fixed
// head, and the work done on stored values without a full decode (patching
// the state fields in place, copying out payload and metadata). Kept apart
// from record-codec.ts, which dispatches by version and owns the MessagePack
// `requires` map, so the one layout the hot paths touch reads in one place.
//
// Version 4 item layout (numbers big-endian; str/bytes = u32 length + bytes):
//   u8 version, u8 kind=1, u8 flags, u8 state,
//   f64 priority, f64 enqueuedAtMs, f64 deliverAtMs, f64 leaseMs,
//   f64 leaseExpiresAtMs (0 unless flag leaseExpires),
//   u32 maxAttempts, u32 attempt, u32 deliveries, u32 leaseBoot,
//   [f64 ttlExpiresAtMs],
//   str ns, str topic, bytes payload, bytes metadata,
//   [str deadReason], [bytes requires (MessagePack map)],
//   [u32 count + str... after], [str key], [str group]
//   flags: bit0 ttl, bit1 leaseExpires, bit2 deadReason, bit3 requires,
//   bit4 after, bit5 key, bit6 delivery = at_most_once, bit7 group
//   then, from version 5 on and only when one of its fields is set, the
//   extension: u8 extFlags (bit0 prefers, bit1 preferWaitMs, bit2 trace),
//   [bytes prefers (MessagePack map)], [f64 preferWaitMs], [str trace]
//
// Every field that changes after enqueue (state, deliverAtMs,
// leaseExpiresAtMs, attempt, deliveries, leaseBoot) sits at a fixed offset in
// the first 60 bytes, so a lease, extend, expiry or nack rewrites an item by
// patching a copy of its stored value (patchItemState) instead of decoding it
// and encoding it again; the payload for the delivery is a view of that copy.
// The group comes last, after every other field, so neither that header nor
// the offsets of payload and metadata move for it.
//
// Version 3 is version 4 without the group: the same header, the same
// fields in the same order, and flag bit 7 never set. A version 3 value is
// therefore a version 4 value with no group, and a version 4 value a version
// 5 value with no extension; a patch relabels either as the current version
// (so every value written back is of the current version).

import { assert } from "../lib/assert.ts";
import { getF64, setF64, setU32 } from "./byte-cursor.ts";
import type { ByteReader, ByteWriter } from "./byte-cursor.ts";
import { RECORD_VERSION } from "./record.ts";
import type { ItemRecord, StoredState } from "./record.ts";
import { RecordDecodeError, RecordKind, itemFlag, stateCodes } from "./record-format.ts";
import type { ItemHead } from "./record-format.ts";

/**
 * Append a checked item's value (current version) to `to`. `requiresBytes`
 * is record.requires already encoded (record-codec.ts owns MessagePack), or
 * null when the item has none.
 */
export function appendItemFields(to: ByteWriter, record: ItemRecord, requiresBytes: Uint8Array | null, prefersBytes: Uint8Array | null): void {
  let flags = itemShapeFlags(
    record.ttlExpiresAtMs !== null,
    record.deadReason !== null,
    record.requires !== null,
    record.after !== null,
    record.key !== null,
    record.delivery === "at_most_once",
  );
  if (record.leaseExpiresAtMs !== null) flags |= itemFlag.leaseExpires;
  if (record.group !== null) flags |= itemFlag.group;
  to.u8(RECORD_VERSION);
  to.u8(RecordKind.item);
  to.u8(flags);
  to.u8(stateCodes.indexOf(record.state));
  to.f64(record.priority);
  to.f64(record.enqueuedAtMs);
  to.f64(record.deliverAtMs);
  to.f64(record.leaseMs);
  to.f64(record.leaseExpiresAtMs ?? 0);
  to.u32(record.maxAttempts);
  to.u32(record.attempt);
  to.u32(record.deliveries);
  to.u32(record.leaseBoot);
  if (record.ttlExpiresAtMs !== null) to.f64(record.ttlExpiresAtMs);
  to.string(record.ns);
  to.string(record.topic);
  to.byteString(record.payload);
  to.byteString(record.metadata);
  if (record.deadReason !== null) to.string(record.deadReason);
  if (requiresBytes !== null) to.byteString(requiresBytes);
  if (record.after !== null) {
    to.u32(record.after.length);
    for (const id of record.after) to.string(id);
  }
  if (record.key !== null) to.string(record.key);
  if (record.group !== null) to.string(record.group);
  const preferWaitMs = record.preferWaitMs ?? 0;
  const trace = record.trace ?? null;
  const ext = (prefersBytes === null ? 0 : itemExtFlag.prefers) | (preferWaitMs === 0 ? 0 : itemExtFlag.preferWaitMs) | (trace === null ? 0 : itemExtFlag.trace);
  if (ext === 0) return;
  to.u8(ext);
  if (prefersBytes !== null) to.byteString(prefersBytes);
  if (preferWaitMs !== 0) to.f64(preferWaitMs);
  if (trace !== null) to.string(trace);
}

/** The extension's flag bits (version 5 on; the layout above). */
export const itemExtFlag = { prefers: 1, preferWaitMs: 2, trace: 4 } as const;

/**
 * The flag bits that say which optional fields a value holds (everything but
 * leaseExpires, which a state patch sets, and group, which never changes
 * after enqueue): a stored value may be patched only when memory's item
 * would be written with the same ones.
 */
export function itemShapeFlags(ttl: boolean, deadReason: boolean, requires: boolean, after: boolean, key: boolean, atMostOnce: boolean): number {
  let flags = 0;
  if (ttl) flags |= itemFlag.ttl;
  if (deadReason) flags |= itemFlag.deadReason;
  if (requires) flags |= itemFlag.requires;
  if (after) flags |= itemFlag.after;
  if (key) flags |= itemFlag.key;
  if (atMostOnce) flags |= itemFlag.atMostOnce;
  return flags;
}

// Offsets of the item header (versions 3 and 4; see the layout above).
const header = {
  flags: 2,
  state: 3,
  enqueuedAtMs: 12,
  deliverAtMs: 20,
  leaseExpiresAtMs: 36,
  attempt: 48,
  deliveries: 52,
  leaseBoot: 56,
  headerBytes: 60,
} as const;

/** The fields of an item that change after enqueue: what patchItemState writes. Reused by its caller (no allocation per write). */
export class ItemStatePatch {
  /** itemShapeFlags of the item as memory holds it. */
  shapeFlags = 0;
  state: StoredState = "pending";
  deliverAtMs = 0;
  leaseExpiresAtMs: number | null = null;
  attempt = 0;
  deliveries = 0;
  leaseBoot = 0;
}

/**
 * Patch the state fields of an encoded item value in place (a copy the caller
 * owns), and label it with the current version. Returns false, changing
 * nothing, when the value is not of version 3, 4 or 5 or holds other optional
 * fields than `patch.shapeFlags` says (a dead reason or `after` list memory
 * has dropped or added since the value was stored): the caller then writes
 * the whole record.
 */
export function patchItemState(bytes: Uint8Array, patch: ItemStatePatch): boolean {
  if (bytes.length < header.headerBytes || !hasCurrentHeader(bytes)) return false;
  const storedFlags = bytes[header.flags] as number;
  // `requires` and the group never change after enqueue, and memory keeps no copy of `requires`: the stored value's stay as they are.
  if ((storedFlags & ~(itemFlag.leaseExpires | enqueueOnlyFlags)) !== (patch.shapeFlags & ~enqueueOnlyFlags)) return false;
  // The checks assertItemRecord makes on these fields (messages built only on failure: this runs per lease).
  const state = stateCodes.indexOf(patch.state);
  if (state < 0) assert(false, `item patch: state ${String(patch.state)}`);
  if (!Number.isFinite(patch.deliverAtMs)) assert(false, "item patch: deliverAtMs not finite");
  if (patch.leaseExpiresAtMs !== null && !Number.isFinite(patch.leaseExpiresAtMs)) assert(false, "item patch: leaseExpiresAtMs not finite");
  if (!(isU32(patch.attempt) && isU32(patch.deliveries) && isU32(patch.leaseBoot))) assert(false, "item patch: a count out of range");
  bytes[0] = RECORD_VERSION;
  bytes[header.flags] = patch.leaseExpiresAtMs === null ? storedFlags & ~itemFlag.leaseExpires : storedFlags | itemFlag.leaseExpires;
  bytes[header.state] = state;
  setF64(bytes, header.deliverAtMs, patch.deliverAtMs);
  setF64(bytes, header.leaseExpiresAtMs, patch.leaseExpiresAtMs ?? 0);
  setU32(bytes, header.attempt, patch.attempt);
  setU32(bytes, header.deliveries, patch.deliveries);
  setU32(bytes, header.leaseBoot, patch.leaseBoot);
  return true;
}

/** Optional fields set at enqueue and never changed: a patch leaves them as stored. */
const enqueueOnlyFlags = itemFlag.requires | itemFlag.group;

/** An item value of version 3, 4 or 5, the versions that share the fixed header (the layout above). */
function hasCurrentHeader(bytes: Uint8Array): boolean {
  const version = bytes[0];
  return (version === RECORD_VERSION || version === 3 || version === 4) && bytes[1] === RecordKind.item;
}

function isU32(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0 && value <= 0xffff_ffff;
}

/** Append an already encoded item value (a patched stored value) to `to`, after a check of its first bytes. */
export function appendItemValue(to: ByteWriter, value: Uint8Array): void {
  checkItemValue(value);
  to.raw(value);
}

/** A copy of an item value the engine hands over, checked as appendItemValue checks it (a store that keeps it keeps its own). */
export function copyItemValue(value: Uint8Array): Uint8Array {
  checkItemValue(value);
  return value.slice();
}

function checkItemValue(value: Uint8Array): void {
  if (!(value.length >= header.headerBytes && value[0] === RECORD_VERSION && value[1] === RecordKind.item)) {
    assert(false, `item value: not a current-version item (${value.length} bytes, version ${value[0]}, kind ${value[1]})`);
  }
}

/**
 * Copies of the payload and metadata inside a current-version item value,
 * and its enqueue instant (memory keeps none of the three once stored).
 * Copies, not views: `value` is a small array of its own, and a view of it
 * makes the engine give it a separate ArrayBuffer (about 0.8 µs a delivery in
 * the drain profile), where a copy of 100 bytes costs a few dozen ns.
 */
export function itemValueBytes(value: Uint8Array): ItemValueBytes {
  const into: ItemValueBytes = { payload: noBytes, metadata: noBytes, enqueuedAtMs: 0, trace: null };
  readItemValueBytes(value, into);
  return into;
}

/** What itemValueBytes reads out of an item value. */
export interface ItemValueBytes {
  payload: Uint8Array;
  metadata: Uint8Array;
  enqueuedAtMs: number;
  /** The item's trace context (a delivery carries it), or null. */
  trace: string | null;
}

/** Shared by every empty payload or metadata read (most metadata is empty; recent-values.ts reads them too): frozen, it has no element to change. */
export const noBytes = Object.freeze(new Uint8Array(0)) as Uint8Array;

/**
 * Where a delivery's parts lie in a current-version item value: offsets into
 * it, and the enqueue instant; traceLength -1 when the item has no trace. The
 * ring of recent values (storage/lmdb/recent-values.ts) keeps these parts
 * alone; readItemValueBytes copies them out.
 */
export class DeliveryParts {
  enqueuedAtMs = 0;
  payloadAt = 0;
  payloadLength = 0;
  metadataAt = 0;
  metadataLength = 0;
  traceAt = 0;
  traceLength = -1;
}

/** Fill `into` with where `value`'s delivery parts lie (the layout above). */
export function locateDeliveryParts(value: Uint8Array, into: DeliveryParts): void {
  if (value.length < header.headerBytes || !hasCurrentHeader(value)) throw new RecordDecodeError("item value: not a version 3, 4 or 5 item");
  into.enqueuedAtMs = getF64(value, header.enqueuedAtMs);
  let at = header.headerBytes;
  if ((value[header.flags] as number) & itemFlag.ttl) at += 8;
  at += 4 + u32At(value, at); // ns
  at += 4 + u32At(value, at); // topic
  const payloadLength = u32At(value, at);
  into.payloadAt = at + 4;
  into.payloadLength = payloadLength;
  at += 4 + payloadLength;
  const metadataLength = u32At(value, at);
  if (at + 4 + metadataLength > value.length) throw new RecordDecodeError("item value: truncated");
  into.metadataAt = at + 4;
  into.metadataLength = metadataLength;
  at += 4 + metadataLength;
  // Most items end with their metadata: no optional field, no trace to look for.
  into.traceLength = -1;
  if (at !== value.length) locateTrace(value, at, into);
}

/** The engine is synchronous: one scratch for readItemValueBytes. */
const scratchParts = new DeliveryParts();

/** itemValueBytes into a caller's object (a hot path's scratch: one object fewer per delivery). */
export function readItemValueBytes(value: Uint8Array, into: ItemValueBytes): void {
  const parts = scratchParts;
  locateDeliveryParts(value, parts);
  into.payload = parts.payloadLength === 0 ? noBytes : value.slice(parts.payloadAt, parts.payloadAt + parts.payloadLength);
  into.metadata = parts.metadataLength === 0 ? noBytes : value.slice(parts.metadataAt, parts.metadataAt + parts.metadataLength);
  into.enqueuedAtMs = parts.enqueuedAtMs;
  into.trace = parts.traceLength < 0 ? null : decodeTrace(value, parts.traceAt, parts.traceLength);
}

const traceDecoder = new TextDecoder();

/** A trace's UTF-8 bytes as its string. */
export function decodeTrace(bytes: Uint8Array, at: number, length: number): string {
  return traceDecoder.decode(bytes.subarray(at, at + length));
}

/** Where the trace of an item value whose optional fields start at `from` lies (the layout above), if it has one. */
function locateTrace(value: Uint8Array, from: number, into: DeliveryParts): void {
  const flags = value[header.flags] as number;
  let at = from;
  if (flags & itemFlag.deadReason) at += 4 + u32At(value, at);
  if (flags & itemFlag.requires) at += 4 + u32At(value, at);
  if (flags & itemFlag.after) {
    const count = u32At(value, at);
    at += 4;
    for (let i = 0; i < count; i++) at += 4 + u32At(value, at);
  }
  if (flags & itemFlag.key) at += 4 + u32At(value, at);
  if (flags & itemFlag.group) at += 4 + u32At(value, at);
  if (at >= value.length) return;
  const ext = value[at++] as number;
  if (!(ext & itemExtFlag.trace)) return;
  if (ext & itemExtFlag.prefers) at += 4 + u32At(value, at);
  if (ext & itemExtFlag.preferWaitMs) at += 8;
  const length = u32At(value, at);
  if (at + 4 + length > value.length) throw new RecordDecodeError("item value: truncated");
  into.traceAt = at + 4;
  into.traceLength = length;
}

function u32At(bytes: Uint8Array, at: number): number {
  if (at + 4 > bytes.length) throw new RecordDecodeError("item value: truncated");
  return (bytes[at] as number) * 0x100_0000 + (((bytes[at + 1] as number) << 16) | ((bytes[at + 2] as number) << 8) | (bytes[at + 3] as number));
}

/** Read a version 3 or 4 item's fixed head (after version and kind) into `head`; returns its flags. */
export function readItemHead(reader: ByteReader, head: ItemHead): number {
  const flags = reader.u8();
  const state = stateCodes[reader.u8()];
  if (state === undefined) throw new RecordDecodeError("item record: unknown state code");
  const priority = reader.f64();
  const enqueuedAtMs = reader.f64();
  const deliverAtMs = reader.f64();
  const leaseMs = reader.f64();
  const leaseExpiresAt = reader.f64();
  const leaseExpiresAtMs = flags & itemFlag.leaseExpires ? leaseExpiresAt : null;
  const maxAttempts = reader.u32();
  const attempt = reader.u32();
  const deliveries = reader.u32();
  const leaseBoot = reader.u32();
  const ttlExpiresAtMs = flags & itemFlag.ttl ? reader.f64() : null;
  head.priority = priority;
  head.enqueuedAtMs = enqueuedAtMs;
  head.deliverAtMs = deliverAtMs;
  head.leaseMs = leaseMs;
  head.ttlExpiresAtMs = ttlExpiresAtMs;
  head.maxAttempts = maxAttempts;
  head.attempt = attempt;
  head.deliveries = deliveries;
  head.leaseBoot = leaseBoot;
  head.state = state;
  head.leaseExpiresAtMs = leaseExpiresAtMs;
  return flags;
}
