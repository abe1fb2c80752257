// redrive: dead letters of a topic back to ready with attempts reset (all of
// them, or the listed ids).

import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";

export const redriveOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const { limits } = ctx;
    const topic = reader.requiredString(request, "topic", 1, limits.topicBytesMax);
    const ids =
      request.ids === undefined || request.ids === null
        ? null
        : reader.stringArray(request, "ids", 1, limits.idsPerRequestMax, limits.idBytesMax);
    if (reader.failure !== null || topic === null) return failed(reader.failure!);
    const result = ctx.engine.redrive(ns, topic, ids, ctx.nowMs);
    if (!result.ok) return failed(result.failure);
    const { value, durable } = result.value;
    return reply({ redriven: value.redriven }, durable);
  },
});
