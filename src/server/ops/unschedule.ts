// unschedule: remove a schedule by name; `removed` false when there was none.
// Replies once the removal is durable.

import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";

export const unscheduleOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const name = reader.requiredString(request, "name", 1, ctx.limits.scheduleNameBytesMax);
    if (reader.failure !== null || name === null) return failed(reader.failure!);
    const result = ctx.engine.unschedule(ns, name, ctx.nowMs);
    if (!result.ok) return failed(result.failure);
    return reply({ removed: result.value.value.removed }, result.value.durable);
  },
});
