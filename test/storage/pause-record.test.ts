// Goal: the pause record (a paused topic or group, record kind 4) round-trips
// through the codec exactly, with and without an end and a group; bad records
// are refused before encode and damaged values after decode; its bytes are
// pinned by hex fixtures (a layout change must bump RECORD_VERSION); a pause
// written by record version 3 still decodes (group null) and a version 3
// value claiming a group is damage; record versions 1 and 2, written before
// pauses existed, refuse a pause value; and pause keys never collide, a
// topic's keeping the key it had before groups.

import { describe, expect, test } from "bun:test";
import { AssertionError } from "../../src/lib/assert.ts";
import { RECORD_VERSION } from "../../src/storage/record.ts";
import type { PauseRecord } from "../../src/storage/record.ts";
import { RecordDecodeError, RecordKind, decodeOutcomeRecord, decodePauseRecord, encodePauseRecord } from "../../src/storage/record-codec.ts";
import { pauseKey } from "../../src/storage/store.ts";
import { fromHex, v3Values } from "./record-fixtures.ts";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("pause record", () => {
  test("round-trips: until resume, timed, of a group, long and non-ASCII names", () => {
    const cases: PauseRecord[] = [
      { ns: "n", topic: "t", group: null, untilMs: null },
      { ns: "billing", topic: "emails", group: null, untilMs: 1_700_000_000_123 },
      { ns: "é".repeat(127), topic: "\u{1F600}".repeat(63), group: null, untilMs: 0 },
      { ns: "n", topic: "t", group: "acme", untilMs: null },
      { ns: "n", topic: "t", group: "ü".repeat(127), untilMs: 5 },
    ];
    for (const record of cases) {
      const bytes = encodePauseRecord(record);
      expect(bytes[0]).toBe(RECORD_VERSION);
      expect(bytes[1]).toBe(RecordKind.pause);
      expect(decodePauseRecord(bytes)).toEqual(record);
    }
  });

  test("the version 4 layout (version 5 labels it alike), pinned: version, kind, flags, f64 untilMs, ns, topic, [group]", () => {
    // 04 04 | 01 | f64 1700000000123 | u32 1 "n" | u32 1 "t"
    expect(hex(encodePauseRecord({ ns: "n", topic: "t", group: null, untilMs: 1_700_000_000_123 }))).toBe("050401" + "4278bcfe5687b000" + "000000016e" + "0000000174");
    expect(hex(encodePauseRecord({ ns: "n", topic: "t", group: null, untilMs: null }))).toBe("050400" + "0000000000000000" + "000000016e" + "0000000174");
    // flags 2 (a group) | 3 (a group, timed), then u32 1 "g" after the topic.
    expect(hex(encodePauseRecord({ ns: "n", topic: "t", group: "g", untilMs: null }))).toBe("050402" + "0000000000000000" + "000000016e" + "0000000174" + "0000000167");
    expect(hex(encodePauseRecord({ ns: "n", topic: "t", group: "g", untilMs: 1_700_000_000_123 }))).toBe("050403" + "4278bcfe5687b000" + "000000016e" + "0000000174" + "0000000167");
  });

  test("a pause written by record version 3 still decodes, as the topic's own; one claiming a group is damage", () => {
    const v3 = fromHex(v3Values.pause);
    expect(v3[0]).toBe(3);
    expect(decodePauseRecord(v3)).toEqual({ ns: "n", topic: "t", group: null, untilMs: 1_700_000_000_123 });
    const grouped = fromHex(v3Values.pause + "0000000167");
    grouped[2] = 3;
    expect(() => decodePauseRecord(grouped)).toThrow("unknown flags 3");
  });

  test("invalid records are refused before encode", () => {
    expect(() => encodePauseRecord({ ns: "", topic: "t", group: null, untilMs: null })).toThrow(AssertionError);
    expect(() => encodePauseRecord({ ns: "n", topic: "", group: null, untilMs: null })).toThrow(AssertionError);
    expect(() => encodePauseRecord({ ns: "n", topic: "t", group: null, untilMs: Number.NaN })).toThrow(AssertionError);
    expect(() => encodePauseRecord({ ns: "n", topic: "t", group: "", untilMs: null })).toThrow(AssertionError);
    expect(() => encodePauseRecord({ ns: "n", topic: "t", untilMs: null } as unknown as PauseRecord)).toThrow(AssertionError);
  });

  test("damaged values, another kind, unknown flags and old versions are refused", () => {
    const good = encodePauseRecord({ ns: "n", topic: "t", group: "g", untilMs: 5 });
    expect(() => decodePauseRecord(good.subarray(0, good.length - 1))).toThrow();
    expect(() => decodePauseRecord(new Uint8Array([...good, 0]))).toThrow(RecordDecodeError);
    expect(() => decodeOutcomeRecord(good)).toThrow(RecordDecodeError);
    const flags = good.slice();
    flags[2] = 4;
    expect(() => decodePauseRecord(flags)).toThrow("unknown flags");
    for (const version of [1, 2]) {
      const old = good.slice();
      old[0] = version;
      expect(() => decodePauseRecord(old)).toThrow(`record version ${version} has no pause records`);
    }
  });

  test("pause keys never collide across (ns, topic, group) splits; a topic's own keeps its earlier key", () => {
    // The key of a topic's own pause, as data dirs written before groups hold it.
    expect(pauseKey("billing", "emails")).toBe("7:billingemails");
    expect(pauseKey("billing", "emails", null)).toBe("7:billingemails");
    const keys = [
      pauseKey("ab", "c"),
      pauseKey("a", "bc"),
      pauseKey("a:", "b"),
      pauseKey("a", ":b"),
      pauseKey("n", "1:tg"),
      pauseKey("n", "t", "g"),
      pauseKey("n", "t:g"),
      pauseKey("n", "t", ":g"),
      pauseKey("n", "t:", "g"),
      pauseKey("n", "t", "g:h"),
      pauseKey("n", "t:g", "h"),
      pauseKey("g1:n", "t"),
      pauseKey("n", "t", "*"),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });
});
