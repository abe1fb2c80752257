// dequeue: up to `count` ready items per listed topic, each leased. With
// wait_ms > 0 and nothing ready the engine parks the request; the connection
// keeps serving later requests meanwhile (replies go out of order).

import type { Delivery, DequeueInput, Reply } from "../../engine/api.ts";
import type { Limits } from "../../limits.ts";
import { DeliveriesReply } from "../../protocol/reply-encoder.ts";
import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import type { RequestReader, Source } from "../request-reader.ts";

export function decodeDequeue(request: Source, limits: Limits, owner: number, reader: RequestReader): DequeueInput | null {
  const list = reader.requiredArray(request, "topics", 1, limits.topicsPerDequeueMax);
  const capabilities = reader.anyMap(request, "capabilities");
  const waitMs = reader.int(request, "wait_ms", { min: 0, max: limits.waitMsMax });
  const leaseMs = reader.int(request, "lease_ms", { min: 1, max: limits.leaseMsMax });
  if (list === null || reader.failure !== null) return null;
  const topics: DequeueInput["topics"] = new Array(list.length);
  // Most dequeues name one topic: no set to allocate for those.
  const seen = list.length > 1 ? new Set<string>() : null;
  for (let i = 0; i < list.length; i++) {
    reader.at("topics", i);
    const source = reader.element(list[i]);
    if (source === null) return null;
    const topic = reader.requiredString(source, "topic", 1, limits.topicBytesMax);
    const count = reader.int(source, "count", { min: 1, max: limits.countPerDequeueMax, overMaxTooLarge: true });
    if (reader.failure !== null || topic === null) return null;
    if (seen !== null) {
      if (seen.has(topic)) {
        reader.fail("BAD_REQUEST", "topic", "topic listed twice");
        return null;
      }
      seen.add(topic);
    }
    topics[i] = { topic, count: count ?? 1 };
  }
  reader.top();
  return { topics, capabilities, waitMs: waitMs ?? 0, leaseMs, owner };
}

/** The engine's deliveries go into the reply as they are: the reply encoder writes them under the wire's keys. */
function deliveriesReply(r: Reply<{ deliveries: Delivery[] }>): OpOutcome {
  return reply(new DeliveriesReply(r.value.deliveries), r.durable);
}

export const dequeueOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = ctx.reader;
    reader.reset();
    const input = decodeDequeue(request, ctx.limits, ctx.session.connectionId, reader);
    if (input === null) return failed(reader.failure!);
    const result = ctx.engine.dequeue(ns, input, ctx.nowMs);
    if (!result.ok) return failed(result.failure);
    const outcome = result.value;
    if (outcome.kind === "done") return deliveriesReply(outcome.reply);
    return { kind: "parked", waiter: outcome.waiter.then(deliveriesReply) };
  },
});
