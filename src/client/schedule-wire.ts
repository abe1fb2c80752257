// The schedule ops' shapes on the wire (`schedule`, `schedules`; the
// contract's "Schedules") and their conversion to and from the client's
// camelCase types. The schedule's item goes as enqueue sends one.

import { enqueueItemFromWire, enqueueItemToWire } from "./item-wire.ts";
import type { WireMap } from "./transport.ts";
import type { Schedule, ScheduleInput } from "./types.ts";

/** A `schedule` request's fields (without ns). The item carries only the trace it was given: a schedule's ticks have no producer span. */
export function scheduleRequestFields(input: ScheduleInput): WireMap {
  return {
    name: input.name,
    cron: input.cron,
    every_ms: input.everyMs,
    timezone: input.timezone,
    item: enqueueItemToWire(input.item, undefined),
    catch_up: input.catchUp,
  };
}

export function scheduleFromWire(w: WireMap): Schedule {
  const schedule: Schedule = {
    name: w.name as string,
    timezone: typeof w.timezone === "string" ? w.timezone : "UTC",
    item: enqueueItemFromWire((w.item ?? {}) as WireMap),
    catchUp: w.catch_up === "none" ? "none" : "one",
    nextAtMs: w.next_at_ms as number,
  };
  if (typeof w.cron === "string") schedule.cron = w.cron;
  if (typeof w.every_ms === "number") schedule.everyMs = w.every_ms;
  if (typeof w.last_at_ms === "number") schedule.lastAtMs = w.last_at_ms;
  if (typeof w.last_id === "string") schedule.lastId = w.last_id;
  return schedule;
}
