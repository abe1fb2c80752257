// groups: a topic's groups with their counts and pauses, by group name (the
// nil group, items without a group, first), one page at a time.

import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";
import { groupCountsToWire } from "./wire-encoding.ts";

export const groupsOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: true,
  changesState: false,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const { limits } = ctx;
    const topic = reader.requiredString(request, "topic", 1, limits.topicBytesMax);
    const limit = reader.int(request, "limit", { min: 1, max: Number.MAX_SAFE_INTEGER });
    const after = reader.string(request, "after", 0, limits.groupBytesMax);
    if (reader.failure !== null || topic === null) return failed(reader.failure!);
    const page = ctx.engine.groups(ns, topic, { limit: Math.min(limit ?? limits.groupsPageMax, limits.groupsPageMax), after });
    const value: Source = { groups: page.groups.map(groupCountsToWire) };
    if (page.next !== null) value.next = page.next;
    return reply(value);
  },
});
