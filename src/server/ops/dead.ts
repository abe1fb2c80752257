// dead: the dead letters of one topic. A limit above the page maximum is lowered to it.

import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";
import { itemStateToWire } from "./wire-encoding.ts";

export const deadOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: true,
  changesState: false,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const { limits } = ctx;
    const topic = reader.requiredString(request, "topic", 1, limits.topicBytesMax);
    const limit = reader.int(request, "limit", { min: 1, max: Number.MAX_SAFE_INTEGER });
    if (reader.failure !== null || topic === null) return failed(reader.failure!);
    const page = ctx.engine.dead(ns, topic, Math.min(limit ?? limits.deadPageMax, limits.deadPageMax));
    return reply({ items: page.items.map(itemStateToWire) });
  },
});
