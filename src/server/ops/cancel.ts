// cancel: end items in any live state (outcome "cancelled"); unknown ids are listed as missing.

import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";

export const cancelOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const ids = reader.stringArray(request, "ids", 1, ctx.limits.idsPerRequestMax, ctx.limits.idBytesMax);
    if (ids === null) return failed(reader.failure!);
    const result = ctx.engine.cancel(ns, ids, ctx.nowMs);
    if (!result.ok) return failed(result.failure);
    const { value, durable } = result.value;
    return reply({ cancelled: value.cancelled, missing: value.missing }, durable);
  },
});
