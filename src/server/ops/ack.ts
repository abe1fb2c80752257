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
    const acked = ctx.engine.ack(ns, receipts, ctx.nowMs);
    if (!acked.ok) return failed(acked.failure);
    const ackReply = new AckReply(acked.acked, acked.stale);
    // The engine's ack always gives its commit; any other engine (a test's) may give a promise.
    const commit = acked.commit;
    return commit === undefined ? lentReply(ctx, ackReply, acked.durable) : replyOnCommit(ctx, ackReply, commit);
  },
});
