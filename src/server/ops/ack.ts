// ack: end each delivery named by a receipt (outcome "acked"); receipts whose
// delivery already ended are listed as stale. `results`, when given, holds
// one bin (or nil) per receipt: each acked item keeps it with its outcome.

import { AckReply } from "../../protocol/reply-encoder.ts";
import { failed, lentReply, namespacedOp, replyOnCommit, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import type { RequestReader, Source } from "../request-reader.ts";

/** The `results` list: as long as `receipts`, each a bin of at most resultBytesMax or nil; null when absent (or with a failure set). */
function decodeResults(request: Source, receiptCount: number, resultBytesMax: number, reader: RequestReader): Array<Uint8Array | null> | null {
  const list = reader.array(request, "results", 0, Number.MAX_SAFE_INTEGER);
  if (list === null) return null;
  if (list.length !== receiptCount) {
    reader.fail("BAD_REQUEST", "results", `must hold one entry per receipt (${receiptCount})`);
    return null;
  }
  const results: Array<Uint8Array | null> = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    reader.at("results", i);
    results[i] = reader.bin({ "": list[i] }, "", resultBytesMax);
    if (reader.failure !== null) return null;
  }
  reader.top();
  return results;
}

export const ackOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = ctx.reader;
    reader.reset();
    const receipts = reader.stringArray(request, "receipts", 1, ctx.limits.idsPerRequestMax, ctx.limits.receiptBytesMax);
    if (receipts === null) return failed(reader.failure!);
    // The usual ack carries no results: one property read, nothing decoded.
    const results = request.results === undefined ? null : decodeResults(request, receipts.length, ctx.limits.resultBytesMax, reader);
    if (reader.failure !== null) return failed(reader.failure);
    const acked = ctx.engine.ack(ns, receipts, ctx.nowMs, results);
    if (!acked.ok) return failed(acked.failure);
    const ackReply = new AckReply(acked.acked, acked.stale);
    // The engine's ack always gives its commit; any other engine (a test's) may give a promise.
    const commit = acked.commit;
    return commit === undefined ? lentReply(ctx, ackReply, acked.durable) : replyOnCommit(ctx, ackReply, commit);
  },
});
