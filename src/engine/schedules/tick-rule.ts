// When a schedule ticks: a cron expression read in an IANA time zone, or a
// fixed period from the instant the schedule was set. The one file that
// knows croner (the cron parser and its calendar arithmetic, time zones and
// daylight-saving changes included); everything else asks these functions.
// Options: `paused: true` so croner never arms a timer of its own (the
// engine's deadline heap is the only timer), and croner's defaults otherwise
// (a day-of-month and a day-of-week both given match either, as in Vixie
// cron; a local time skipped by a daylight-saving change fires at the first
// instant after the gap, a repeated one fires once).

import { Cron } from "croner";

export interface TickRule {
  /** The parsed cron expression, or null for a period. */
  readonly cron: Cron | null;
  readonly everyMs: number | null;
  /** Periods count from here: ticks fall at anchorMs + k * everyMs, k >= 1. */
  readonly anchorMs: number;
}

/** Why a rule cannot be made: the request field at fault and a message. */
export interface TickRuleProblem {
  field: "cron" | "timezone";
  message: string;
}

/** Whether `timezone` names an IANA time zone this runtime knows. */
export function isTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return true;
  } catch {
    // A RangeError is the runtime's answer for an unknown zone: a refusal, not a fault.
    return false;
  }
}

/** A rule from a cron expression (5 or 6 fields: seconds first when 6) or a period. */
export function makeTickRule(cron: string | null, everyMs: number | null, timezone: string, anchorMs: number): TickRule | TickRuleProblem {
  if (!isTimeZone(timezone)) return { field: "timezone", message: `unknown time zone ${JSON.stringify(timezone)}` };
  if (cron === null) return { cron: null, everyMs, anchorMs };
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return { field: "cron", message: `must have 5 or 6 fields, has ${fields}` };
  try {
    const parsed = new Cron(cron, { timezone, paused: true });
    // An expression that can never match (30 February) has no next run.
    if (parsed.nextRun(new Date(anchorMs)) === null) return { field: "cron", message: "never matches" };
    return { cron: parsed, everyMs: null, anchorMs };
  } catch (error) {
    // croner throws a TypeError naming the bad part: the request's mistake.
    return { field: "cron", message: (error as Error).message };
  }
}

/** The first tick strictly after `afterMs` (and after the anchor), or null when there is none. */
export function nextTickAfter(rule: TickRule, afterMs: number): number | null {
  const from = Math.max(afterMs, rule.anchorMs);
  if (rule.cron === null) {
    const everyMs = rule.everyMs as number;
    return rule.anchorMs + (Math.floor((from - rule.anchorMs) / everyMs) + 1) * everyMs;
  }
  const next = rule.cron.nextRun(new Date(from));
  return next === null ? null : next.getTime();
}

/** The latest tick at or before `nowMs` and after the anchor, or null when none has come yet. */
export function latestTickAtOrBefore(rule: TickRule, nowMs: number): number | null {
  if (rule.cron === null) {
    const everyMs = rule.everyMs as number;
    const periods = Math.floor((nowMs - rule.anchorMs) / everyMs);
    return periods >= 1 ? rule.anchorMs + periods * everyMs : null;
  }
  const previous = rule.cron.previousRuns(1, new Date(nowMs + 1))[0];
  if (previous === undefined) return null;
  const atMs = previous.getTime();
  return atMs > rule.anchorMs ? atMs : null;
}
