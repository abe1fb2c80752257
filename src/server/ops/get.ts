// get: the state of each id, in request order (null when unknown or past outcome retention).

import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";
import { anyStateToWire } from "./wire-encoding.ts";

export const getOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: true,
  changesState: false,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const ids = reader.stringArray(request, "ids", 1, ctx.limits.idsPerRequestMax, ctx.limits.idBytesMax);
    if (ids === null) return failed(reader.failure!);
    const result = ctx.engine.get(ns, ids, ctx.nowMs);
    if (!result.ok) return failed(result.failure);
    return reply({ items: result.value.items.map(anyStateToWire) });
  },
});
