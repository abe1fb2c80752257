// policies: a topic's stored policies, its own first, then by group name, one
// page at a time (a limit above the page maximum is lowered to it; `next`
// continues).

import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";
import { policyViewToWire } from "./wire-encoding.ts";

export const policiesOp: OpSpec = namespacedOp({
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
    const page = ctx.engine.policies(ns, topic, { limit: Math.min(limit ?? limits.groupsPageMax, limits.groupsPageMax), after });
    const value: Source = { policies: page.policies.map(policyViewToWire) };
    if (page.next !== null) value.next = page.next;
    return reply(value);
  },
});
