// Goal: the pause record (a paused topic, record kind 4) round-trips through
// the codec exactly, with and without an end; bad records are refused before
// encode and damaged values after decode; its bytes are pinned by a hex
// fixture (a layout change must bump RECORD_VERSION); and record versions 1
// and 2, written before pauses existed, refuse a pause value.

import { describe, expect, test } from "bun:test";
import { AssertionError } from "../../src/lib/assert.ts";
import { RECORD_VERSION } from "../../src/storage/record.ts";
import type { PauseRecord } from "../../src/storage/record.ts";
import { RecordDecodeError, RecordKind, decodeOutcomeRecord, decodePauseRecord, encodePauseRecord } from "../../src/storage/record-codec.ts";
import { pauseKey } from "../../src/storage/store.ts";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("pause record", () => {
  test("round-trips: until resume, timed, long and non-ASCII names", () => {
    const cases: PauseRecord[] = [
      { ns: "n", topic: "t", untilMs: null },
      { ns: "billing", topic: "emails", untilMs: 1_700_000_000_123 },
      { ns: "é".repeat(127), topic: "\u{1F600}".repeat(63), untilMs: 0 },
    ];
    for (const record of cases) {
      const bytes = encodePauseRecord(record);
      expect(bytes[0]).toBe(RECORD_VERSION);
      expect(bytes[1]).toBe(RecordKind.pause);
      expect(decodePauseRecord(bytes)).toEqual(record);
    }
  });

  test("the version 3 layout, pinned: version, kind, flags, f64 untilMs, ns, topic", () => {
    // 03 04 | 01 | f64 1700000000123 | u32 1 "n" | u32 1 "t"
    expect(hex(encodePauseRecord({ ns: "n", topic: "t", untilMs: 1_700_000_000_123 }))).toBe("030401" + "4278bcfe5687b000" + "000000016e" + "0000000174");
    expect(hex(encodePauseRecord({ ns: "n", topic: "t", untilMs: null }))).toBe("030400" + "0000000000000000" + "000000016e" + "0000000174");
  });

  test("invalid records are refused before encode", () => {
    expect(() => encodePauseRecord({ ns: "", topic: "t", untilMs: null })).toThrow(AssertionError);
    expect(() => encodePauseRecord({ ns: "n", topic: "", untilMs: null })).toThrow(AssertionError);
    expect(() => encodePauseRecord({ ns: "n", topic: "t", untilMs: Number.NaN })).toThrow(AssertionError);
  });

  test("damaged values, another kind, unknown flags and old versions are refused", () => {
    const good = encodePauseRecord({ ns: "n", topic: "t", untilMs: 5 });
    expect(() => decodePauseRecord(good.subarray(0, good.length - 1))).toThrow();
    expect(() => decodePauseRecord(new Uint8Array([...good, 0]))).toThrow(RecordDecodeError);
    expect(() => decodeOutcomeRecord(good)).toThrow(RecordDecodeError);
    const flags = good.slice();
    flags[2] = 2;
    expect(() => decodePauseRecord(flags)).toThrow("unknown flags");
    for (const version of [1, 2]) {
      const old = good.slice();
      old[0] = version;
      expect(() => decodePauseRecord(old)).toThrow(`record version ${version} has no pause records`);
    }
  });

  test("pause keys never collide across (ns, topic) splits", () => {
    expect(pauseKey("ab", "c")).not.toBe(pauseKey("a", "bc"));
    expect(pauseKey("a:", "b")).not.toBe(pauseKey("a", ":b"));
  });
});
