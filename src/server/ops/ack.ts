// ack: end each delivery named by a receipt (outcome "acked"); receipts whose
// delivery already ended are listed as stale.

import { AckReply } from "../../protocol/reply-encoder.ts";
import { failed, lentReply, namespacedOp, replyOnCommit, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import type { Source } from "../request-reader.ts";

export const ackOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = ctx.reader;
    reader.reset();
    const receipts = reader.stringArray(request, "receipts", 1, ctx.limits.idsPerRequestMax, ctx.limits.receiptBytesMax);
    if (receipts === null) return failed(reader.failure!);
    const result = ctx.engine.ack(ns, receipts, ctx.nowMs);
    if (!result.ok) return failed(result.failure);
    const { value, commit } = result.value;
    const ackReply = new AckReply(value.acked, value.stale);
    // The engine's ack ends through finishOp, which always gives its commit; any other engine (a test's) may give a promise.
    return commit === undefined ? lentReply(ctx, ackReply, result.value.durable) : replyOnCommit(ctx, ackReply, commit);
  },
});
