import type { WireMap } from "./transport.ts";
import type { Schedule, ScheduleInput } from "./types.ts";
/** A `schedule` request's fields (without ns). The item carries only the trace it was given: a schedule's ticks have no producer span. */
export declare function scheduleRequestFields(input: ScheduleInput): WireMap;
export declare function scheduleFromWire(w: WireMap): Schedule;
