// pause: stop deliveries from a topic, or from one of its groups, for
// `for_ms`, or until `resume` (engine/ops/pause.ts, engine/groups/group-pauses.ts). Replies once the pause is durable; `paused_until_ms` is
// absent for a pause until resume.

import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";

export const pauseOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const { limits } = ctx;
    const topic = reader.requiredString(request, "topic", 1, limits.topicBytesMax);
    const forMs = reader.int(request, "for_ms", { min: 1, max: limits.pauseMsMax });
    const group = reader.string(request, "group", 1, limits.groupBytesMax);
    if (reader.failure !== null || topic === null) return failed(reader.failure!);
    const result = ctx.engine.pause(ns, topic, forMs, ctx.nowMs, group);
    if (!result.ok) return failed(result.failure);
    const { value, durable } = result.value;
    return reply(value.pausedUntilMs === null ? {} : { paused_until_ms: value.pausedUntilMs }, durable);
  },
});
