// The `schedule`, `unschedule` and `schedules` ops, schedules at start, and
// their ticks. A tick is one enqueue of the schedule's item with the key
// `schedule:<name>:<tick_at_ms>`, in one write set with the schedule's record
// naming that tick as its last (ops/enqueue.ts's TickPlacement): the item and
// the last tick commit together or not at all, so a restart never fires a
// committed tick again, and a tick that never committed counts as missed.
// The next tick waits on the engine's deadline heap; the heap only says a tick
// is due, and the engine fires it once the deadline loop's set is closed
// (firing is an enqueue, with its own write set).
//
// Missed ticks at start (or, in cluster mode, when a node takes the shard
// over): catch_up "one" fires the latest missed tick at once, "none" waits
// for the next. A tick that fires late (a busy event loop) fires as the
// latest tick due, so late ticks collapse to one the same way.

import { assert } from "../../lib/assert.ts";
import type { ScheduleRecord } from "../../storage/record.ts";
import { scheduleKey } from "../../storage/store.ts";
import type { EnqueueItemInput, Reply, Result, ScheduleInput, ScheduleTickCounts, ScheduleView } from "../api.ts";
import { atScheduleName } from "../failures/failure-location.ts";
import { fail, type FailureResult } from "../failures/failures.ts";
import type { EnqueueItem } from "../ops/enqueue-item.ts";
import type { ScheduleItemPlace, TickPlacement } from "../ops/enqueue.ts";
import { finishOp, type OpContext } from "../ops/op-context.ts";
import { parsePrefers, parseRequires } from "../matching/index.ts";
import type { ItemStates } from "../state/item-states.ts";
import { Deadline, DeadlineKind } from "../time/deadlines.ts";
import type { EngineDeadlines } from "../time/engine-deadlines.ts";
import { itemOfTemplate, Schedule, templateOf, tickKey } from "./schedule.ts";
import { latestTickAtOrBefore, makeTickRule, nextTickAfter, type TickRule } from "./tick-rule.ts";

/** Where a schedule's record and its ticks' items go; cluster mode's placement decides, else any shard. */
export interface ScheduleShards {
  /** The schedule's shard (its record's), or -1 when any will do (a single node). */
  scheduleShard(ns: string, name: string, item: ScheduleItemPlace): number;
}

/** A tick refused, for the server's log. */
export type TickRefusalListener = (ns: string, name: string, tickAtMs: number, message: string) => void;

export class Schedules {
  private readonly byNamespace = new Map<string, Map<string, Schedule>>();
  private count = 0;
  /** Ticks due, handed over by the deadline loop, fired by fireDue. */
  private readonly due: Schedule[] = [];
  readonly ticks: ScheduleTickCounts = { enqueued: 0, duplicate: 0, refused: 0, failed: 0 };
  onRefused: TickRefusalListener | null = null;

  constructor(
    private readonly states: ItemStates,
    private readonly deadlines: EngineDeadlines,
    private readonly shards: ScheduleShards | null,
    /** The engine's enqueue of one tick's item. */
    private readonly enqueue: (ns: string, item: EnqueueItem, nowMs: number, tick: TickPlacement) => Result<Reply<{ ids: string[] }>>,
  ) {}

  get size(): number {
    return this.count;
  }

  schedule(ctx: OpContext, nsName: string, input: ScheduleInput, nowMs: number): Result<Reply<{ name: string; nextAtMs: number | null }>> {
    const rule = makeTickRule(input.cron, input.everyMs, input.timezone, nowMs);
    if ("field" in rule) return fail("invalid_value", `${rule.field}: ${rule.message}`);
    const invalid = this.checkItem(input.item);
    if (invalid !== null) return invalid;
    const replaced = this.byNamespace.get(nsName)?.get(input.name) ?? null;
    // Cluster mode: a replacement whose item's group puts it on another shard would need two shards' fenced writes.
    if (replaced !== null && replaced.shard !== this.shardOf(nsName, input.name, placeOf(input.item))) return scheduleMoveRefused(input.name);
    if (replaced === null) {
      const limits = this.states.limits;
      if (this.count >= limits.schedulesMax) return fail("over_limit", `the server already holds ${limits.schedulesMax} schedules (schedules_max)`, { at: atScheduleName });
      const inNs = this.byNamespace.get(nsName)?.size ?? 0;
      if (inNs >= limits.schedulesPerNamespaceMax) {
        return fail("over_limit", `namespace already holds ${limits.schedulesPerNamespaceMax} schedules (schedules_per_namespace_max)`, { at: atScheduleName });
      }
    }
    // The last tick carries over a replacement: a tick it already fired is not fired again.
    const record: ScheduleRecord = {
      ns: nsName,
      name: input.name,
      cron: input.cron,
      everyMs: input.cron === null ? input.everyMs : null,
      timezone: input.timezone,
      catchUp: input.catchUp,
      anchorMs: nowMs,
      lastAtMs: replaced?.record.lastAtMs ?? null,
      lastId: replaced?.record.lastId ?? null,
      item: templateOf(input.item),
    };
    if (replaced !== null) this.remove(replaced);
    const schedule = this.add(record, rule);
    this.arm(schedule, nextTickAfter(rule, Math.max(nowMs, record.lastAtMs ?? nowMs)));
    this.states.ws().putSchedule(record, schedule.shard);
    return finishOp(ctx, { name: input.name, nextAtMs: schedule.nextAtMs }, nowMs);
  }

  unschedule(ctx: OpContext, nsName: string, name: string, nowMs: number): Result<Reply<{ removed: boolean }>> {
    const schedule = this.byNamespace.get(nsName)?.get(name);
    if (schedule === undefined) return { ok: true, value: { value: { removed: false }, durable: null } };
    this.remove(schedule);
    this.states.ws().deleteSchedule(nsName, name, schedule.shard);
    return finishOp(ctx, { removed: true }, nowMs);
  }

  /** A page of a namespace's schedules by name; `after` is the last name of the page before. */
  list(nsName: string, query: { limit: number; after: string | null }): { schedules: ScheduleView[]; next: string | null } {
    const byName = this.byNamespace.get(nsName);
    if (byName === undefined) return { schedules: [], next: null };
    const after = query.after;
    const names = [...byName.keys()].filter((name) => after === null || name > after).sort();
    const page = names.slice(0, query.limit);
    const schedules = page.map((name) => viewOf(byName.get(name) as Schedule));
    return { schedules, next: names.length > page.length ? (page[page.length - 1] as string) : null };
  }

  /** The stored schedules at start (or a shard's, taken over): each armed for its next tick, or its latest missed one (catch_up "one"). */
  load(records: Iterable<ScheduleRecord>, nowMs: number): void {
    for (const record of records) {
      const rule = makeTickRule(record.cron, record.everyMs, record.timezone, record.anchorMs);
      // A stored expression was checked when it was set; a runtime that no longer knows its zone is an operating fault, not a crash.
      if ("field" in rule) {
        this.onRefused?.(record.ns, record.name, nowMs, `schedule not loaded: ${rule.field}: ${rule.message}`);
        continue;
      }
      this.arm(this.add(record, rule), firstTickAtStart(record, rule, nowMs));
    }
  }

  /** Cluster mode: the shard moved to another node; its schedules go, unwritten (the new owner loads them from the store). */
  dropShard(shard: number): void {
    const gone: Schedule[] = [];
    for (const byName of this.byNamespace.values()) for (const schedule of byName.values()) if (schedule.shard === shard) gone.push(schedule);
    for (const schedule of gone) this.remove(schedule);
  }

  /** The live view of a schedule this engine holds, or null. */
  view(nsName: string, name: string): ScheduleView | null {
    const schedule = this.byNamespace.get(nsName)?.get(name);
    return schedule === undefined ? null : viewOf(schedule);
  }

  /** The deadline loop found this schedule's tick due: fired by fireDue once the loop's set is closed. */
  tickDue(schedule: Schedule): void {
    schedule.timer = null;
    this.due.push(schedule);
  }

  /** Fire the ticks tickDue collected (outside any open write set). */
  fireDue(nowMs: number): void {
    assert(!this.states.setOpen, "engine: schedule tick inside an op");
    while (this.due.length > 0) {
      const schedule = this.due.shift() as Schedule;
      // Removed or replaced after its tick was found due: that tick is gone with it.
      if (this.byNamespace.get(schedule.record.ns)?.get(schedule.record.name) !== schedule) continue;
      this.fire(schedule, nowMs);
    }
  }

  /** Tests: every schedule is in the table and has its next tick armed, or is due. */
  checkInvariants(): void {
    let count = 0;
    for (const byName of this.byNamespace.values()) {
      for (const schedule of byName.values()) {
        count++;
        assert(schedule.timer !== null || this.due.includes(schedule) || nextTickAfter(schedule.rule, Number.MAX_SAFE_INTEGER / 2) === null, "schedule without a next tick");
      }
    }
    assert(count === this.count, "schedule count");
  }

  /** Enqueue the item of the latest tick due at nowMs, then arm the next tick. */
  private fire(schedule: Schedule, nowMs: number): void {
    const record = schedule.record;
    const tickAtMs = latestTickAtOrBefore(schedule.rule, nowMs) ?? nowMs;
    const tick: TickPlacement = {
      shard: schedule.itemShard,
      write: (set, ids) => {
        schedule.record = { ...schedule.record, lastAtMs: tickAtMs, lastId: ids[0] as string };
        set.putSchedule(schedule.record, schedule.shard);
      },
    };
    const before = this.states.items.size;
    const result = this.enqueue(record.ns, itemOfTemplate(record.item, tickKey(record.name, tickAtMs)), nowMs, tick);
    if (result.ok) {
      if (this.states.items.size > before) this.ticks.enqueued++;
      else this.ticks.duplicate++;
      const written = schedule.record;
      // A commit that fails leaves neither the item nor the tick on disk: the schedule shows its tick before again (not retried).
      result.value.durable?.catch((error: unknown) => {
        if (schedule.record === written) schedule.record = record;
        this.onRefused?.(record.ns, record.name, tickAtMs, `the tick's commit failed: ${(error as Error).message}`);
      });
    } else {
      const kind = result.failure.kind;
      if (kind === "rate_limited" || kind === "quota_unreachable") this.ticks.refused++;
      else this.ticks.failed++;
      this.onRefused?.(record.ns, record.name, tickAtMs, result.failure.message);
    }
    this.arm(schedule, nextTickAfter(schedule.rule, Math.max(tickAtMs, nowMs)));
  }

  /** requires and prefers are checked as enqueue checks them, so a bad one fails at `schedule`, not at every tick. */
  private checkItem(item: EnqueueItemInput): FailureResult | null {
    if (item.requires !== null) {
      const parsed = parseRequires(item.requires, this.states.limits);
      if (!parsed.ok) return fail(parsed.kind, parsed.message, { at: { kind: "scheduleItem", part: { of: "requires", at: parsed.at } } });
    }
    const prefers = item.prefers ?? null;
    if (prefers !== null) {
      const parsed = parsePrefers(prefers, this.states.limits);
      if (!parsed.ok) return fail(parsed.kind, parsed.message, { at: { kind: "scheduleItem", part: { of: "prefers", at: parsed.at } } });
    }
    return null;
  }

  /** The shard a schedule's record lives on: the placement's, or 0 on a single node (where its items go anywhere). */
  private shardOf(nsName: string, name: string, item: ScheduleItemPlace): number {
    const shard = this.shards?.scheduleShard(nsName, name, item) ?? -1;
    return shard < 0 ? 0 : shard;
  }

  private add(record: ScheduleRecord, rule: TickRule): Schedule {
    const shard = this.shards?.scheduleShard(record.ns, record.name, placeOf(record.item)) ?? -1;
    const schedule = new Schedule(record, rule, shard < 0 ? 0 : shard, shard);
    let byName = this.byNamespace.get(record.ns);
    if (byName === undefined) {
      byName = new Map();
      this.byNamespace.set(record.ns, byName);
    }
    assert(!byName.has(record.name), `schedule ${scheduleKey(record.ns, record.name)} added twice`);
    byName.set(record.name, schedule);
    this.count++;
    return schedule;
  }

  private remove(schedule: Schedule): void {
    const byName = this.byNamespace.get(schedule.record.ns);
    assert(byName?.get(schedule.record.name) === schedule, "schedule removed twice");
    byName.delete(schedule.record.name);
    if (byName.size === 0) this.byNamespace.delete(schedule.record.ns);
    this.count--;
    if (schedule.timer !== null) this.deadlines.cancel(schedule.timer);
    schedule.timer = null;
  }

  private arm(schedule: Schedule, atMs: number | null): void {
    if (schedule.timer !== null) this.deadlines.cancel(schedule.timer);
    schedule.timer = atMs === null ? null : this.deadlines.schedule(new Deadline(atMs, DeadlineKind.ScheduleTick, schedule));
  }
}

/** An item's (or a stored template's) topic and group, which decide a schedule's shard in cluster mode. */
function placeOf(item: { topic?: unknown; group?: unknown }): ScheduleItemPlace {
  return { topic: String(item.topic ?? ""), group: typeof item.group === "string" ? item.group : null };
}

/**
 * A replacement that would move a schedule to another shard (cluster mode:
 * its item's group changed, or was added or removed): refused, as the
 * contract's cluster rule keeps a group's items on one shard and the old and
 * new shards may have two owners (docs/decisions/033-schedules.md).
 */
export function scheduleMoveRefused(name: string): FailureResult {
  return fail("invalid_value", `schedule ${JSON.stringify(name)} lives on its item's group's shard; a new group (or none) would move it to another shard: unschedule it first`, {
    at: { kind: "scheduleItem", part: { of: "group" } },
  });
}

/** The tick a schedule starts with: the latest one missed while down for catch_up "one", else the next. */
function firstTickAtStart(record: ScheduleRecord, rule: TickRule, nowMs: number): number | null {
  const latest = latestTickAtOrBefore(rule, nowMs);
  const missed = latest !== null && latest > (record.lastAtMs ?? record.anchorMs);
  if (missed && record.catchUp === "one") return latest;
  return nextTickAfter(rule, Math.max(nowMs, record.lastAtMs ?? nowMs));
}

/**
 * A stored schedule as `schedules` shows it, for a node that does not fire it
 * (cluster mode: another node's shard): its next tick as its owner arms it
 * from the stored record (null when its rule no longer reads).
 */
export function viewOfRecord(record: ScheduleRecord, nowMs: number): ScheduleView {
  const rule = makeTickRule(record.cron, record.everyMs, record.timezone, record.anchorMs);
  return recordView(record, "field" in rule ? null : firstTickAtStart(record, rule, nowMs));
}

function viewOf(schedule: Schedule): ScheduleView {
  return recordView(schedule.record, schedule.nextAtMs);
}

function recordView(record: ScheduleRecord, nextAtMs: number | null): ScheduleView {
  return {
    name: record.name,
    cron: record.cron,
    everyMs: record.everyMs,
    timezone: record.timezone,
    catchUp: record.catchUp,
    item: record.item,
    nextAtMs,
    lastAtMs: record.lastAtMs,
    lastId: record.lastId,
  };
}
