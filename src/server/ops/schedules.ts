// schedules: a namespace's schedules by name, one page at a time (a limit
// above the page maximum is lowered to it; `next` continues). In cluster
// mode any node lists every node's, read from the database.

import type { ScheduleView } from "../../engine/api.ts";
import { namespacedOp, failed, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";

export const schedulesOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: true,
  changesState: false,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const { limits } = ctx;
    const limit = reader.int(request, "limit", { min: 1, max: Number.MAX_SAFE_INTEGER });
    const after = reader.string(request, "after", 0, limits.scheduleNameBytesMax);
    if (reader.failure !== null) return failed(reader.failure);
    const query = { limit: Math.min(limit ?? limits.groupsPageMax, limits.groupsPageMax), after };
    // In cluster mode one node answers for every shard, from the database (cluster/cluster-engine.ts).
    if (ctx.engine.scheduleListAll !== undefined) return { kind: "parked", waiter: ctx.engine.scheduleListAll(ns, query, ctx.nowMs).then(pageReply) };
    return pageReply(ctx.engine.scheduleList(ns, query));
  },
});

function pageReply(page: { schedules: ScheduleView[]; next: string | null }): OpOutcome {
  const value: Source = { schedules: page.schedules.map(scheduleViewToWire) };
  if (page.next !== null) value.next = page.next;
  return reply(value);
}

/** A schedule as the wire shows it; the item's fields in the wire's snake_case (delayMs is delay_ms). */
function scheduleViewToWire(view: ScheduleView): Record<string, unknown> {
  const wire: Record<string, unknown> = { name: view.name };
  if (view.cron !== null) wire.cron = view.cron;
  if (view.everyMs !== null) wire.every_ms = view.everyMs;
  wire.timezone = view.timezone;
  const item: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(view.item)) item[field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)] = value;
  wire.item = item;
  wire.catch_up = view.catchUp;
  if (view.nextAtMs !== null) wire.next_at_ms = view.nextAtMs;
  if (view.lastAtMs !== null) wire.last_at_ms = view.lastAtMs;
  if (view.lastId !== null) wire.last_id = view.lastId;
  return wire;
}
