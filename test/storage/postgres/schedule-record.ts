// The schedule record the PostgreSQL store tests write: schedule "a" of
// namespace "n", every second, with its last tick at `lastAtMs` (none for null).

import type { ScheduleRecord } from "../../../src/storage/record.ts";

export function scheduleRecord(lastAtMs: number | null): ScheduleRecord {
  return {
    ns: "n",
    name: "a",
    cron: null,
    everyMs: 1000,
    timezone: "UTC",
    catchUp: "one",
    anchorMs: 5,
    lastAtMs,
    lastId: lastAtMs === null ? null : "1:1",
    item: { topic: "t", group: "g" },
  };
}
