// dequeue: up to `count` ready items per listed topic, each leased. With
// wait_ms > 0 and nothing ready the engine parks the request; the connection
// keeps serving later requests meanwhile (replies go out of order).

import type { DequeueDone, DequeueInput } from "../../engine/api.ts";
import type { Limits } from "../../limits.ts";
import { DeliveriesReply } from "../../protocol/reply-encoder.ts";
import { failed, lentReply, namespacedOp, reply, replyOnCommit, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import type { RequestReader, Source } from "../request-reader.ts";

/** Decode a dequeue request into `into` (its topics list and entries reused); false with `reader.failure` set when it is bad. */
function decodeDequeue(request: Source, limits: Limits, owner: number, reader: RequestReader, into: DequeueInput): boolean {
  const list = reader.requiredArray(request, "topics", 1, limits.topicsPerDequeueMax);
  const capabilities = reader.anyMap(request, "capabilities");
  const waitMs = reader.int(request, "wait_ms", { min: 0, max: limits.waitMsMax });
  const leaseMs = reader.int(request, "lease_ms", { min: 1, max: limits.leaseMsMax });
  if (list === null || reader.failure !== null) return false;
  const topics = into.topics;
  if (topics.length !== list.length) topics.length = list.length;
  // Most dequeues name one topic: no set to allocate for those.
  const seen = list.length > 1 ? new Set<string>() : null;
  for (let i = 0; i < list.length; i++) {
    reader.at("topics", i);
    const source = reader.element(list[i]);
    if (source === null) return false;
    const topic = reader.requiredString(source, "topic", 1, limits.topicBytesMax);
    const count = reader.int(source, "count", { min: 1, max: limits.countPerDequeueMax, overMaxTooLarge: true });
    if (reader.failure !== null || topic === null) return false;
    if (seen !== null) {
      if (seen.has(topic)) {
        reader.fail("BAD_REQUEST", "topic", "topic listed twice");
        return false;
      }
      seen.add(topic);
    }
    const entry = topics[i];
    if (entry === undefined) {
      topics[i] = { topic, count: count ?? 1 };
    } else {
      entry.topic = topic;
      entry.count = count ?? 1;
    }
  }
  reader.top();
  into.capabilities = capabilities;
  into.waitMs = waitMs ?? 0;
  into.leaseMs = leaseMs;
  into.owner = owner;
  return true;
}

/**
 * The engine's deliveries go into the reply as they are: the reply encoder
 * writes them under the wire's keys. A fresh outcome: a parked dequeue's
 * settles in a later turn, where the context's lent one is not its own.
 */
function deliveriesReply(done: DequeueDone): OpOutcome {
  return reply(new DeliveriesReply(done.deliveries), done.durable);
}

export const dequeueOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = ctx.reader;
    reader.reset();
    const input = ctx.dequeueInput;
    if (!decodeDequeue(request, ctx.limits, ctx.session.connectionId, reader, input)) return failed(reader.failure!);
    const outcome = ctx.engine.dequeue(ns, input, ctx.nowMs);
    // The request's capabilities map is not kept past the request.
    input.capabilities = null;
    if (!outcome.ok) return failed(outcome.failure);
    if (outcome.kind === "done") {
      // Listened on, as an ack's commit is: the reply is queued as the commit settles, so the
      // replies of one commit leave in one write (docs/decisions/051-replies-of-a-commit.md).
      const commit = outcome.commit;
      const deliveries = new DeliveriesReply(outcome.deliveries);
      return commit === undefined || commit === null ? lentReply(ctx, deliveries, outcome.durable) : replyOnCommit(ctx, deliveries, commit);
    }
    return { kind: "parked", waiter: outcome.waiter.then(deliveriesReply) };
  },
});
