// Goal: the schedule record (record kind 6, from record version 5)
// round-trips through the codec with cron or every_ms, either catch-up and
// with or without a last tick, its item map included (bin payloads stay
// bytes); records that break its invariants are refused before encode;
// record versions 1 to 4 refuse a schedule value; a damaged flag byte is a
// decode error; its bytes are pinned (a layout change must bump
// RECORD_VERSION); schedule keys of different (ns, name) pairs never collide.

import { describe, expect, test } from "bun:test";
import { AssertionError } from "../../src/lib/assert.ts";
import { RECORD_VERSION } from "../../src/storage/record.ts";
import type { ScheduleRecord } from "../../src/storage/record.ts";
import { RecordDecodeError, RecordKind, decodeScheduleRecord, encodeScheduleRecord } from "../../src/storage/record-codec.ts";
import { scheduleKey } from "../../src/storage/store.ts";

function schedule(overrides: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return { ns: "n", name: "s", cron: null, everyMs: 1000, timezone: "UTC", catchUp: "one", anchorMs: 1_700_000_000_000, lastAtMs: null, lastId: null, item: { topic: "t" }, ...overrides };
}

describe("schedule record", () => {
  test("round-trips every shape", () => {
    const cases: ScheduleRecord[] = [
      schedule(),
      schedule({ cron: "30 2 * * *", everyMs: null, timezone: "Europe/Berlin", catchUp: "none" }),
      schedule({ lastAtMs: 1_700_000_001_000, lastId: "3:17" }),
      schedule({ ns: "é".repeat(127), name: "\u{1F600}".repeat(63), item: { topic: "t", priority: -5, payload: new Uint8Array([0, 255]), requires: { gpu: { gte: 2 } }, delayMs: 10 } }),
    ];
    for (const record of cases) {
      const bytes = encodeScheduleRecord(record);
      expect([bytes[0], bytes[1]]).toEqual([RECORD_VERSION, RecordKind.schedule]);
      const decoded = decodeScheduleRecord(bytes);
      expect(decoded).toEqual(record);
    }
    const payload = decodeScheduleRecord(encodeScheduleRecord(schedule({ item: { topic: "t", payload: new Uint8Array([7]) } }))).item.payload;
    expect(payload).toBeInstanceOf(Uint8Array);
  });

  test("the layout, pinned: version, kind, flags, f64 everyMs, anchorMs, lastAtMs, ns, name, timezone, [cron], [lastId], bin item", () => {
    const record = schedule({ cron: "* * * * *", everyMs: null, catchUp: "none", anchorMs: 1000, lastAtMs: 2000, lastId: "0:1" });
    // 05 06 | 07 (cron, none, last) | f64 0 | f64 1000 | f64 2000 | "n" | "s" | "UTC" | "* * * * *" | "0:1" | u32 9 + {topic: "t"}
    expect(Buffer.from(encodeScheduleRecord(record)).toString("hex")).toBe(
      "050607" + "0000000000000000" + "408f400000000000" + "409f400000000000" + "000000016e" + "0000000173" + "00000003555443" + "000000092a202a202a202a202a" + "00000003303a31" + "0000000981a5746f706963a174",
    );
  });

  test("a record breaking its invariants is refused before encode", () => {
    const bad: Array<Partial<ScheduleRecord>> = [
      { name: "" },
      { cron: "* * * * *" },
      { everyMs: null },
      { everyMs: 0 },
      { catchUp: "all" as "one" },
      { lastAtMs: 5 },
      { lastId: "1:1" },
      { timezone: "" },
    ];
    for (const overrides of bad) expect(() => encodeScheduleRecord(schedule(overrides))).toThrow(AssertionError);
  });

  test("versions before 5 hold no schedule records; unknown flags are damage", () => {
    const bytes = encodeScheduleRecord(schedule());
    for (const version of [1, 2, 3, 4]) {
      const older = bytes.slice();
      older[0] = version;
      expect(() => decodeScheduleRecord(older)).toThrow(RecordDecodeError);
    }
    const damaged = bytes.slice();
    damaged[2] = 0x80;
    expect(() => decodeScheduleRecord(damaged)).toThrow(RecordDecodeError);
  });

  test("keys: the namespace's length keeps (ns, name) pairs apart", () => {
    expect(scheduleKey("ab", "c")).not.toBe(scheduleKey("a", "bc"));
    expect(scheduleKey("n", "s")).toBe("1:ns");
  });
});
