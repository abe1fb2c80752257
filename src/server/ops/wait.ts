// wait: each id's state, as `get` answers it, once every id has ended (or
// names no live item), or when wait_ms runs out. A parked wait holds up no
// other request on the connection (replies go out of order, matched by id);
// on shutdown it answers with what it has (engine/ops/item-waits.ts).

import type { EndedItemState, ItemState } from "../../engine/api.ts";
import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";
import { anyStateToWire } from "./wire-encoding.ts";

function itemsReply(items: Array<ItemState | EndedItemState | null>): OpOutcome {
  return reply({ items: items.map(anyStateToWire) });
}

export const waitOp: OpSpec = namespacedOp({
  needsAuth: true,
  // New work is refused while draining; the parked ones are answered then (Server.drain).
  allowedWhileDraining: false,
  changesState: false,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const ids = reader.stringArray(request, "ids", 1, ctx.limits.idsPerRequestMax, ctx.limits.idBytesMax);
    const waitMs = reader.requiredInt(request, "wait_ms", { min: 0, max: ctx.limits.waitMsMax });
    if (ids === null || waitMs === null || reader.failure !== null) return failed(reader.failure!);
    const outcome = ctx.engine.wait(ns, ids, waitMs, ctx.session.connectionId, ctx.nowMs);
    if (!outcome.ok) return failed(outcome.failure);
    if (outcome.kind === "done") return itemsReply(outcome.items);
    return { kind: "parked", waiter: outcome.waiter.then(itemsReply) };
  },
});
