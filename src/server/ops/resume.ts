// resume: lift a topic's or a group's pause (engine/ops/pause.ts); `resumed` is false when it
// was not paused. Replies once the lifted pause is durable.

import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";

export const resumeOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const topic = reader.requiredString(request, "topic", 1, ctx.limits.topicBytesMax);
    const group = reader.string(request, "group", 1, ctx.limits.groupBytesMax);
    if (reader.failure !== null || topic === null) return failed(reader.failure!);
    const result = ctx.engine.resume(ns, topic, ctx.nowMs, group);
    if (!result.ok) return failed(result.failure);
    const { value, durable } = result.value;
    return reply({ resumed: value.resumed }, durable);
  },
});
