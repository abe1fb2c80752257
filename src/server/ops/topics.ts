// topics: per-topic counts in byte order of name, one page at a time. A limit
// above the page maximum is lowered to it (the reply's `next` continues).

import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";
import { topicCountsToWire } from "./wire-encoding.ts";

export const topicsOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: true,
  changesState: false,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const { limits } = ctx;
    const prefix = reader.string(request, "prefix", 0, limits.topicBytesMax);
    const limit = reader.int(request, "limit", { min: 1, max: Number.MAX_SAFE_INTEGER });
    const after = reader.string(request, "after", 0, limits.topicBytesMax);
    if (reader.failure !== null) return failed(reader.failure);
    const page = ctx.engine.topics(ns, { prefix, limit: Math.min(limit ?? limits.topicsPageMax, limits.topicsPageMax), after });
    const value: Source = { topics: page.topics.map(topicCountsToWire) };
    if (page.next !== null) value.next = page.next;
    return reply(value);
  },
});
