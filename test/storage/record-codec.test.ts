// Goal: every record kind round-trips through the binary codec exactly, bad
// records are refused before encode and after decode, decoded byte fields never
// alias the input, and the version table dispatches old values to their reader:
// values of versions 1 to 3 decode with group null, version 4 items round-trip
// with and without a group, and a version 3 value is patched like a current one
// (relabelled version 4). A value inside a larger buffer decodes between its
// bounds.

import { describe, expect, test } from "bun:test";
import { AssertionError } from "../../src/lib/assert.ts";
import { ByteReader } from "../../src/storage/byte-cursor.ts";
import { RECORD_VERSION } from "../../src/storage/record.ts";
import type { ItemRecord } from "../../src/storage/record.ts";
import {
  RecordDecodeError,
  RecordKind,
  decodeItemRecord,
  decodeMetaRecord,
  decodeOutcomeRecord,
  encodeItemRecord,
  encodeMetaRecord,
  encodeOutcomeRecord,
  ItemStatePatch,
  itemShapeFlags,
  itemValueBytes,
  noBytes,
  patchItemState,
  recordReaders,
} from "../../src/storage/record-codec.ts";
import type { RecordReaders } from "../../src/storage/record-codec.ts";
import { fromHex, fullItemRecord, itemRecord, metaRecord, outcomeRecord, v1Values, v2Values, v3Values } from "./record-fixtures.ts";

/** fullItemRecord() as a build before groups stored it. */
const fullWithoutGroup = (): ItemRecord => ({ ...fullItemRecord(), group: null });

describe("record codec", () => {
  test("items round-trip: plain, every optional field, edge numbers", () => {
    const cases: ItemRecord[] = [
      itemRecord(),
      fullItemRecord(),
      itemRecord({ payload: new Uint8Array(10 * 1024).fill(7), metadata: new Uint8Array(1024).fill(1) }),
      itemRecord({ priority: 2 ** 31, deliverAtMs: Number.MAX_SAFE_INTEGER, maxAttempts: 0xffff_ffff, requires: {}, after: [], key: "" }),
      itemRecord({ topic: "t".repeat(255), ns: "é".repeat(100), priority: 0.5 }),
      fullWithoutGroup(),
      itemRecord({ group: "g" }),
      itemRecord({ group: "\u{1F600}".repeat(63), key: "k" }),
    ];
    for (const record of cases) {
      const bytes = encodeItemRecord(record);
      expect(bytes[0]).toBe(RECORD_VERSION);
      expect(bytes[1]).toBe(RecordKind.item);
      expect(decodeItemRecord(bytes)).toEqual(record);
    }
  });

  test("an acked outcome's result is an optional tail flagged in the outcome byte; without one the bytes are unchanged", () => {
    const plain = encodeOutcomeRecord(outcomeRecord());
    const withResult = encodeOutcomeRecord(outcomeRecord({ result: Uint8Array.of(1, 2, 3) }));
    // version, kind, outcome code | 0x80, then the same fields, then a u32 length and the bytes.
    expect(withResult[2]).toBe(0x80);
    expect(plain[2]).toBe(0);
    expect(withResult.subarray(3, plain.length)).toEqual(plain.subarray(3));
    expect([...withResult.subarray(plain.length)]).toEqual([0, 0, 0, 3, 1, 2, 3]);
    expect(decodeOutcomeRecord(withResult)).toEqual(outcomeRecord({ result: Uint8Array.of(1, 2, 3) }));
    expect(decodeOutcomeRecord(plain)).toEqual(outcomeRecord());
    // Only an acked outcome carries a result.
    expect(() => encodeOutcomeRecord(outcomeRecord({ outcome: "cancelled", result: Uint8Array.of(1) }))).toThrow(AssertionError);
    // A truncated result is refused, not misread.
    expect(() => decodeOutcomeRecord(withResult.subarray(0, withResult.length - 1))).toThrow();
    // Results exist from record version 5 on: an older version's value with the flag is damage.
    const labelledV4 = withResult.slice();
    labelledV4[0] = 4;
    expect(() => decodeOutcomeRecord(labelledV4)).toThrow("unknown outcome code");
    const plainV4 = plain.slice();
    plainV4[0] = 4;
    expect(decodeOutcomeRecord(plainV4)).toEqual(outcomeRecord());
  });

  test("a plain item with a 100-byte payload stays small", () => {
    expect(encodeItemRecord(itemRecord({ payload: new Uint8Array(100) })).length).toBeLessThan(200);
  });

  test("outcome and meta round-trip", () => {
    for (const outcome of ["acked", "cancelled", "expired"] as const) {
      const record = outcomeRecord({ outcome });
      expect(decodeOutcomeRecord(encodeOutcomeRecord(record))).toEqual(record);
    }
    for (const meta of [metaRecord(), metaRecord({ nodeId: "a1b2c3", keysReservedBelow: 2 ** 40, boots: 0xffff_ffff })]) {
      const bytes = encodeMetaRecord(meta);
      expect(bytes[0]).toBe(RECORD_VERSION);
      expect(decodeMetaRecord(bytes)).toEqual(meta);
    }
  });

  test("decoded byte fields are copies, not views of the input", () => {
    const bytes = encodeItemRecord(itemRecord());
    const record = decodeItemRecord(bytes);
    bytes.fill(0xee);
    expect(record.payload).toEqual(new Uint8Array([1, 2, 3, 4]));
    expect(record.payload.buffer).not.toBe(bytes.buffer);
  });

  test("an encoded value does not change when the codec encodes the next one", () => {
    const first = encodeItemRecord(itemRecord({ priority: 1 }));
    const copy = first.slice();
    encodeItemRecord(fullItemRecord());
    expect(first).toEqual(copy);
  });

  test("invalid records are refused before encode", () => {
    const bad: Array<Partial<ItemRecord>> = [
      { state: "ready" as ItemRecord["state"] },
      { delivery: "sometimes" as ItemRecord["delivery"] },
      { attempt: -1 },
      { attempt: 1.5 },
      { maxAttempts: 2 ** 32 },
      { priority: Number.NaN },
      { payload: "text" as unknown as Uint8Array },
      { after: [1] as unknown as string[] },
      { requires: [] as unknown as Record<string, unknown> },
      { leaseBoot: -1 },
      { leaseBoot: 2 ** 32 },
      { leaseBoot: undefined as unknown as number },
      { group: "" },
      { group: 5 as unknown as string },
      { group: undefined as unknown as string },
    ];
    for (const overrides of bad) expect(() => encodeItemRecord(itemRecord(overrides))).toThrow(AssertionError);
    expect(() => encodeOutcomeRecord(outcomeRecord({ outcome: "done" as "acked" }))).toThrow(AssertionError);
    expect(() => encodeMetaRecord(metaRecord({ shards: 0 }))).toThrow(AssertionError);
    expect(() => encodeMetaRecord(metaRecord({ boots: -1 }))).toThrow(AssertionError);
    expect(() => encodeMetaRecord(metaRecord({ boots: 2 ** 32 }))).toThrow(AssertionError);
  });

  test("damaged values are refused with a clear error", () => {
    const bytes = encodeItemRecord(fullItemRecord());
    expect(() => decodeItemRecord(new Uint8Array(0))).toThrow(RecordDecodeError);
    expect(() => decodeItemRecord(bytes.subarray(0, bytes.length - 1))).toThrow("record truncated");
    const extra = new Uint8Array(bytes.length + 1);
    extra.set(bytes);
    // A byte after the last field reads as an extension without fields: damage.
    expect(() => decodeItemRecord(extra)).toThrow("extension flags 0");
    const wrongVersion = bytes.slice();
    wrongVersion[0] = 99;
    expect(() => decodeItemRecord(wrongVersion)).toThrow("record version 99 is unknown");
    expect(() => decodeOutcomeRecord(bytes)).toThrow(`record kind ${RecordKind.item} where kind ${RecordKind.outcome} was expected`);
    const badState = bytes.slice();
    badState[3] = 9;
    expect(() => decodeItemRecord(badState)).toThrow("unknown state code");
  });

  test("names decode right whatever came before (the codec reuses the previous ns and topic string when the bytes match)", () => {
    const sequence: ItemRecord[] = [
      itemRecord({ ns: "a", topic: "jobs" }),
      itemRecord({ ns: "a", topic: "jobs" }),
      itemRecord({ ns: "b", topic: "jobz" }),
      itemRecord({ ns: "é", topic: "jobs" }),
      itemRecord({ ns: "é", topic: "jöbs" }),
      itemRecord({ ns: "\u00e9", topic: "j\u00f6bs" }),
      itemRecord({ ns: "", topic: "" }),
      itemRecord({ ns: "ab", topic: "jobs" }),
    ];
    for (const record of sequence) expect(decodeItemRecord(encodeItemRecord(record))).toEqual(record);
    // Malformed UTF-8 of the same length as the previous (Latin-1) name is still refused, never reused.
    const latin = itemRecord({ ns: "\u00e9x", topic: "t" });
    decodeItemRecord(encodeItemRecord(latin));
    const bytes = encodeItemRecord(itemRecord({ ns: "xy", topic: "t" }));
    // ns is at offset 2+2+5*8+4*4 = 60: u32 length 2, then "xy"; make it [0xe9, 0x78].
    expect(bytes[63]).toBe(2);
    bytes[64] = 0xe9;
    expect(() => decodeItemRecord(bytes)).toThrow();
  });

  test("a value inside a larger buffer decodes from its start to its end, and not past either", () => {
    const first = encodeItemRecord(fullItemRecord());
    const second = encodeItemRecord(itemRecord({ key: "k-1", topic: "jobs" }));
    // Two values back to back with a byte before each, as a page of the PostgreSQL store holds them.
    const page = new Uint8Array(2 + first.length + second.length);
    page.set(first, 1);
    page.set(second, 2 + first.length);
    expect(decodeItemRecord(page, recordReaders, true, 1 + first.length, 1)).toEqual(decodeItemRecord(first));
    expect(decodeItemRecord(page, recordReaders, false, page.length, 2 + first.length)).toEqual(decodeItemRecord(second, recordReaders, false));
    // An end short of the value, or a start off by one, is damage.
    expect(() => decodeItemRecord(page, recordReaders, true, first.length, 1)).toThrow("record truncated");
    expect(() => decodeItemRecord(page, recordReaders, true, 1 + first.length, 0)).toThrow(RecordDecodeError);
  });

  test("decoding without bytes skips payload and metadata and reads every other field", () => {
    const full = fullItemRecord();
    const record = decodeItemRecord(encodeItemRecord(full), recordReaders, false);
    expect(record).toEqual({ ...full, payload: new Uint8Array(0), metadata: new Uint8Array(0) });
    expect(record.payload).toBe(noBytes);
    expect(record.metadata).toBe(noBytes);
  });

  test("the version table dispatches an older version to its reader, which upgrades to the current shape", () => {
    // A made-up version 0 in which items were just (ns, topic, payload): the
    // mechanism a real format change would use, with its reader kept here.
    const oldVersion = 0;
    const readV0Item = (reader: ByteReader, _withBytes: boolean): ItemRecord =>
      itemRecord({ ns: reader.string(), topic: reader.string(), payload: reader.byteString(), metadata: new Uint8Array(0) });
    const current = recordReaders.get(RECORD_VERSION) as RecordReaders;
    const readers = new Map<number, RecordReaders>([...recordReaders, [oldVersion, { ...current, item: readV0Item }]]);

    const encoder = new TextEncoder();
    const ns = encoder.encode("legacy");
    const topic = encoder.encode("jobs");
    const parts = [new Uint8Array([oldVersion, RecordKind.item])];
    for (const field of [ns, topic, new Uint8Array([9, 8])]) {
      const length = new Uint8Array(4);
      new DataView(length.buffer).setUint32(0, field.length);
      parts.push(length, field);
    }
    const oldBytes = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      oldBytes.set(part, offset);
      offset += part.length;
    }

    expect(() => decodeItemRecord(oldBytes)).toThrow("record version 0 is unknown (this build reads 1, 2, 3, 4, 5)");
    const upgraded = decodeItemRecord(oldBytes, readers);
    expect(upgraded).toEqual(itemRecord({ ns: "legacy", topic: "jobs", payload: new Uint8Array([9, 8]) }));
    // Current-version values still decode through the same table.
    expect(decodeItemRecord(encodeItemRecord(fullItemRecord()), readers)).toEqual(fullItemRecord());
  });

  test("record version 5 is current: an item's state fields sit at fixed offsets, whatever is set", () => {
    expect(RECORD_VERSION).toBe(5);
    const leased = itemRecord({ state: "leased", attempt: 1, deliveries: 1, leaseBoot: 9, leaseExpiresAtMs: 1_700_000_030_000 });
    expect(decodeItemRecord(encodeItemRecord(leased)).leaseBoot).toBe(9);
    // Leasing does not change a value's length (version 2 added 8 bytes for leaseExpiresAtMs).
    expect(encodeItemRecord(leased).length).toBe(encodeItemRecord(itemRecord()).length);
    expect(encodeItemRecord(fullWithoutGroup()).length).toBe(fromHex(v2Values.full).length);
  });

  test("version 4 is version 3 with the group last: without a group the bytes are version 3's but for the version byte", () => {
    for (const [hex, record] of [
      [v3Values.full, fullWithoutGroup()],
      [v3Values.leased, itemRecord({ state: "leased", attempt: 1, deliveries: 1, leaseBoot: 2, leaseExpiresAtMs: 1_700_000_030_000 })],
    ] as const) {
      const v3 = fromHex(hex);
      const v4 = encodeItemRecord(record);
      expect(v4[0]).toBe(5);
      expect(v4.subarray(1)).toEqual(v3.subarray(1));
    }
    // With a group: flag bit 7, and u32 length + UTF-8 bytes after every other field.
    const plain = encodeItemRecord(itemRecord());
    const grouped = encodeItemRecord(itemRecord({ group: "ab" }));
    expect(grouped[2]).toBe((plain[2] as number) | 0x80);
    expect(Buffer.from(grouped.subarray(plain.length)).toString("hex")).toBe("000000026162");
    expect(grouped.subarray(3, plain.length)).toEqual(plain.subarray(3));
  });

  test("values written by record version 3 still decode, with group null, and re-encode as version 4", () => {
    const full = fromHex(v3Values.full);
    expect(full[0]).toBe(3);
    expect(decodeItemRecord(full)).toEqual(fullWithoutGroup());
    const leased = decodeItemRecord(fromHex(v3Values.leased));
    expect(leased).toEqual(itemRecord({ state: "leased", attempt: 1, deliveries: 1, leaseBoot: 2, leaseExpiresAtMs: 1_700_000_030_000 }));
    expect(encodeItemRecord(leased)[0]).toBe(5);
    expect(decodeItemRecord(encodeItemRecord(leased))).toEqual(leased);
    // Before version 4 the group bit was never set: a value of an older version that sets it is damage.
    for (const [version, hex] of [[1, v1Values.leased], [2, v2Values.leased], [3, v3Values.leased]] as const) {
      const bytes = fromHex(hex);
      bytes[2] = (bytes[2] as number) | 0x80;
      expect(() => decodeItemRecord(bytes)).toThrow(`item record: version ${version} has no group`);
    }
  });

  test("values written by record version 2 still decode, and re-encode as the current version", () => {
    const full = fromHex(v2Values.full);
    expect(full[0]).toBe(2);
    expect(decodeItemRecord(full)).toEqual(fullWithoutGroup());
    const leased = decodeItemRecord(fromHex(v2Values.leased));
    expect(leased).toEqual(itemRecord({ state: "leased", attempt: 1, deliveries: 1, leaseBoot: 2, leaseExpiresAtMs: 1_700_000_030_000 }));
    expect(decodeMetaRecord(fromHex(v2Values.meta))).toEqual(metaRecord());
    expect(decodeOutcomeRecord(fromHex(v2Values.outcome))).toEqual(outcomeRecord());
    expect(encodeItemRecord(leased)[0]).toBe(RECORD_VERSION);
    expect(decodeItemRecord(encodeItemRecord(leased))).toEqual(leased);
  });

  test("values written by record version 1 still decode: leaseBoot and boots read 0", () => {
    const full = fromHex(v1Values.full);
    expect(full[0]).toBe(1);
    expect(decodeItemRecord(full)).toEqual({ ...fullWithoutGroup(), leaseBoot: 0 });
    const leased = decodeItemRecord(fromHex(v1Values.leased));
    expect(leased).toEqual(itemRecord({ state: "leased", attempt: 1, deliveries: 1, leaseExpiresAtMs: 1_700_000_030_000, leaseBoot: 0 }));
    expect(decodeMetaRecord(fromHex(v1Values.meta))).toEqual(metaRecord({ boots: 0 }));
    // Re-encoding upgrades to the current version.
    expect(encodeItemRecord(leased)[0]).toBe(RECORD_VERSION);
  });

  test("a version 1 value is read by the version 1 layout, not the current one", () => {
    // The version byte picks the reader: the same bytes labelled version 2
    // lack the leaseBoot/boots field, so they fail as damage instead of
    // loading as a wrong record.
    const relabelled = fromHex(v1Values.leased);
    relabelled[0] = 2;
    expect(() => decodeItemRecord(relabelled)).toThrow("record truncated");
    const meta = fromHex(v1Values.meta);
    meta[0] = 2;
    expect(() => decodeMetaRecord(meta)).toThrow();
  });
});

describe("item state patch (versions 3 and 4)", () => {
  const shapeOf = (record: ItemRecord): number =>
    itemShapeFlags(
      record.ttlExpiresAtMs !== null,
      record.deadReason !== null,
      record.requires !== null,
      record.after !== null,
      record.key !== null,
      record.delivery === "at_most_once",
    );
  const patchFrom = (record: ItemRecord, changes: Partial<ItemStatePatch>): ItemStatePatch =>
    Object.assign(new ItemStatePatch(), {
      shapeFlags: shapeOf(record),
      state: record.state,
      deliverAtMs: record.deliverAtMs,
      leaseExpiresAtMs: record.leaseExpiresAtMs,
      attempt: record.attempt,
      deliveries: record.deliveries,
      leaseBoot: record.leaseBoot,
      ...changes,
    });

  test("a version 3 value is patched as a current one and relabelled version 4; a group is left as stored", () => {
    const leased = itemRecord({ state: "leased", attempt: 1, deliveries: 1, leaseBoot: 2, leaseExpiresAtMs: 1_700_000_030_000 });
    const value = fromHex(v3Values.leased);
    expect(patchItemState(value, patchFrom(leased, { state: "pending", leaseExpiresAtMs: null }))).toBe(true);
    expect(value[0]).toBe(5);
    expect(decodeItemRecord(value)).toEqual({ ...leased, state: "pending", leaseExpiresAtMs: null });
    // The group never changes after enqueue: memory's shape flags need not carry it.
    const grouped = itemRecord({ group: "g" });
    const groupedValue = encodeItemRecord(grouped);
    expect(patchItemState(groupedValue, patchFrom(grouped, { state: "leased", attempt: 1, deliveries: 1, leaseExpiresAtMs: 5 }))).toBe(true);
    expect(decodeItemRecord(groupedValue)).toEqual({ ...grouped, state: "leased", attempt: 1, deliveries: 1, leaseExpiresAtMs: 5 });
    expect(itemValueBytes(groupedValue)).toEqual({ payload: grouped.payload, metadata: grouped.metadata, enqueuedAtMs: grouped.enqueuedAtMs, trace: null });
  });

  test("requires is left as stored: memory, which keeps no copy, patches a value with or without it", () => {
    for (const record of [fullItemRecord(), itemRecord({ requires: {} }), itemRecord()]) {
      const value = encodeItemRecord(record);
      const withoutRequires = { ...record, requires: null };
      expect(patchItemState(value, patchFrom(withoutRequires, { state: "leased", attempt: 1, deliveries: 1, leaseExpiresAtMs: 5 }))).toBe(true);
      expect(decodeItemRecord(value)).toEqual({ ...record, state: "leased", attempt: 1, deliveries: 1, leaseExpiresAtMs: 5 });
    }
  });

  test("a patched value decodes as the record with the new state fields, every optional field kept", () => {
    for (const record of [itemRecord(), fullItemRecord(), fullWithoutGroup(), itemRecord({ ttlExpiresAtMs: 1_700_000_900_000, key: "k" })]) {
      const changes = { state: "leased" as const, attempt: 3, deliveries: 8, leaseBoot: 0xffff_ffff, leaseExpiresAtMs: 1_700_000_060_000, deliverAtMs: 1_700_000_000_500 };
      const value = encodeItemRecord(record);
      expect(patchItemState(value, patchFrom(record, changes))).toBe(true);
      expect(decodeItemRecord(value)).toEqual({ ...record, ...changes });
      // And back: a lease that ends clears leaseExpiresAtMs.
      expect(patchItemState(value, patchFrom(record, { ...changes, state: "pending", leaseExpiresAtMs: null }))).toBe(true);
      expect(decodeItemRecord(value)).toEqual({ ...record, ...changes, state: "pending", leaseExpiresAtMs: null });
    }
  });

  test("the payload and metadata of a value, copied out", () => {
    const record = fullItemRecord();
    const value = encodeItemRecord(record);
    const { payload, metadata, enqueuedAtMs } = itemValueBytes(value);
    expect(payload).toEqual(record.payload);
    expect(metadata).toEqual(record.metadata);
    expect(enqueuedAtMs).toBe(record.enqueuedAtMs);
    value.fill(0);
    expect(payload).toEqual(record.payload);
    expect(() => itemValueBytes(value)).toThrow(RecordDecodeError);
    expect(() => itemValueBytes(encodeItemRecord(record).subarray(0, 100))).toThrow("truncated");
    const withTtl = itemRecord({ ttlExpiresAtMs: 5, payload: new Uint8Array([9]), metadata: new Uint8Array([7, 7]) });
    expect(itemValueBytes(encodeItemRecord(withTtl))).toEqual({ payload: new Uint8Array([9]), metadata: new Uint8Array([7, 7]), enqueuedAtMs: withTtl.enqueuedAtMs, trace: null });
  });

  test("refused, changing nothing: another record version, another kind, or other optional fields than memory holds", () => {
    const record = itemRecord();
    for (const value of [fromHex(v2Values.leased), fromHex(v1Values.leased), encodeOutcomeRecord(outcomeRecord()), new Uint8Array(10)]) {
      const before = value.slice();
      expect(patchItemState(value, patchFrom(record, { attempt: 1 }))).toBe(false);
      expect(value).toEqual(before);
    }
    // Memory dropped the dead reason (a redrive) the stored value still has: the whole record must be written.
    const dead = itemRecord({ state: "dead", deadReason: "max_attempts" });
    const value = encodeItemRecord(dead);
    const before = value.slice();
    expect(patchItemState(value, patchFrom(itemRecord(), { state: "pending" }))).toBe(false);
    expect(value).toEqual(before);
  });

  test("out-of-range state fields are assertions", () => {
    const record = itemRecord();
    for (const changes of [{ attempt: -1 }, { deliveries: 2 ** 32 }, { leaseBoot: 1.5 }, { deliverAtMs: Number.NaN }, { leaseExpiresAtMs: Number.POSITIVE_INFINITY }]) {
      expect(() => patchItemState(encodeItemRecord(record), patchFrom(record, changes))).toThrow(AssertionError);
    }
  });
});

describe("record version 5: prefers, prefer_wait_ms and trace", () => {
  test("an item with them round-trips; a delivery's read finds the trace past every optional field", () => {
    const record = itemRecord({ requires: { gpu: "a100" }, after: ["1:2"], key: "k", group: "g", prefers: { repo: { in: ["a", "b"], weight: 3 } }, preferWaitMs: 50, trace: "00-abc-def-01" });
    const value = encodeItemRecord(record);
    expect(value[0]).toBe(5);
    expect(decodeItemRecord(value)).toEqual(record);
    expect(itemValueBytes(value).trace).toBe("00-abc-def-01");
    const onlyTrace = itemRecord({ trace: "t" });
    expect(itemValueBytes(encodeItemRecord(onlyTrace)).trace).toBe("t");
    expect(decodeItemRecord(encodeItemRecord(onlyTrace)).trace).toBe("t");
  });

  test("without them the bytes are version 4's but for the version byte, and a version 4 value has no extension", () => {
    const record = itemRecord({ group: "g" });
    const v5 = encodeItemRecord(record);
    const v4 = Uint8Array.from(v5);
    v4[0] = 4;
    const decoded = decodeItemRecord(v4);
    expect(decoded.group).toBe("g");
    expect(decoded.prefers ?? null).toBeNull();
    const withTrace = encodeItemRecord(itemRecord({ trace: "t" }));
    withTrace[0] = 4;
    expect(() => decodeItemRecord(withTrace)).toThrow(RecordDecodeError);
  });
});
