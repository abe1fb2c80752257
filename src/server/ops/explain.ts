// explain: why each item is not being delivered now (engine/reads/explain.ts),
// in request order; null for an id that names no live item of the namespace.

import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";
import { explainReasonToWire } from "./wire-encoding.ts";

export const explainOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: true,
  changesState: false,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const ids = reader.stringArray(request, "ids", 1, ctx.limits.idsPerRequestMax, ctx.limits.idBytesMax);
    if (ids === null) return failed(reader.failure!);
    const result = ctx.engine.explain(ns, ids, ctx.nowMs);
    if (!result.ok) return failed(result.failure);
    const items = result.value.items.map((item) => (item === null ? null : { id: item.id, state: item.state, reasons: item.reasons.map(explainReasonToWire) }));
    return reply({ items });
  },
});
