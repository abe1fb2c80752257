// schedule: set a recurring item (engine/schedules/schedules.ts), replacing
// one of the same name. `item` is read by enqueue's own item reader, so it is
// checked exactly as an enqueued item is (field paths `item.priority`...);
// `key`, `after` and `deliver_at_ms` are refused there: each tick has its own
// key, and an absolute instant would be one moment for every tick. The cron
// expression and time zone are checked here, before the engine sees them.
// Replies once the schedule is durable. In cluster mode the node first reads
// where a schedule of that name is stored (it may live on its item's group's
// shard), so the request parks for one database read.

import type { Reply, Result, ScheduleInput } from "../../engine/api.ts";
import { isTimeZone, makeTickRule } from "../../engine/schedules/tick-rule.ts";
import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";
import { decodeItem } from "./enqueue.ts";

const catchUpChoices = ["one", "none"] as const;
/** Fields of an enqueue item a schedule's item may not have. */
const refusedItemFields = ["key", "after", "deliver_at_ms"] as const;

export const scheduleOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const { limits } = ctx;
    const name = reader.requiredString(request, "name", 1, limits.scheduleNameBytesMax);
    const cron = reader.string(request, "cron", 1, limits.cronBytesMax);
    const everyMs = reader.int(request, "every_ms", { min: limits.scheduleEveryMsMin, max: Number.MAX_SAFE_INTEGER });
    const timezone = reader.string(request, "timezone", 1, limits.timezoneBytesMax) ?? "UTC";
    const catchUp = reader.oneOf(request, "catch_up", catchUpChoices) ?? "one";
    const itemSource = reader.map(request, "item");
    if (reader.failure === null && itemSource === null) reader.fail("BAD_REQUEST", "item", "is required");
    if (reader.failure === null && (cron === null) === (everyMs === null)) reader.fail("BAD_REQUEST", "cron", "give exactly one of cron and every_ms");
    if (reader.failure === null && !isTimeZone(timezone)) reader.fail("BAD_REQUEST", "timezone", `unknown time zone ${JSON.stringify(timezone)}`);
    if (reader.failure === null && cron !== null) {
      const rule = makeTickRule(cron, null, timezone, ctx.nowMs);
      if ("field" in rule) reader.fail("BAD_REQUEST", rule.field, rule.message);
    }
    if (reader.failure !== null || name === null || itemSource === null) return failed(reader.failure!);
    reader.within("item");
    for (const field of refusedItemFields) {
      if (itemSource[field] !== undefined && itemSource[field] !== null) reader.fail("BAD_REQUEST", field, "a schedule's item may not have it");
    }
    const item = reader.failure === null ? decodeItem(itemSource, limits, ctx.nowMs, reader) : null;
    if (item === null) return failed(reader.failure!);
    reader.top();
    const input: ScheduleInput = { name, cron, everyMs: cron === null ? everyMs : null, timezone, catchUp, item };
    const { engine, nowMs } = ctx;
    // In cluster mode the schedule may already live on another shard than its item's (cluster/cluster-engine.ts): ask the database first.
    if (engine.storedScheduleShard !== undefined) {
      return { kind: "parked", waiter: engine.storedScheduleShard(ns, name).then((stored) => scheduleReply(engine.schedule(ns, input, nowMs, stored))) };
    }
    return scheduleReply(engine.schedule(ns, input, nowMs));
  },
});

function scheduleReply(result: Result<Reply<{ name: string; nextAtMs: number | null }>>): OpOutcome {
  if (!result.ok) return failed(result.failure);
  const value: Source = { name: result.value.value.name };
  if (result.value.value.nextAtMs !== null) value.next_at_ms = result.value.value.nextAtMs;
  return reply(value, result.value.durable);
}
