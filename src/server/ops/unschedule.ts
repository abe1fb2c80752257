// unschedule: remove a schedule by name; `removed` false when there was none.
// Replies once the removal is durable. In cluster mode it is answered by the
// owner of the shard the schedule is stored on, read from the database first.

import type { Reply, Result } from "../../engine/api.ts";
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
    const { engine, nowMs } = ctx;
    // In cluster mode the schedule's shard is where it is stored, read first (cluster/cluster-engine.ts).
    if (engine.storedScheduleShard !== undefined) {
      return { kind: "parked", waiter: engine.storedScheduleShard(ns, name).then((stored) => unscheduleReply(engine.unschedule(ns, name, nowMs, stored))) };
    }
    return unscheduleReply(engine.unschedule(ns, name, nowMs));
  },
});

function unscheduleReply(result: Result<Reply<{ removed: boolean }>>): OpOutcome {
  if (!result.ok) return failed(result.failure);
  return reply({ removed: result.value.value.removed }, result.value.durable);
}
