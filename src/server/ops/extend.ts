// extend: set each delivery's lease to end lease_ms from now (it may shorten
// it), replacing the item's metadata when given (a long job's progress).

import type { Limits } from "../../limits.ts";
import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";

function decodeExtend(request: Source, limits: Limits, reader: RequestReader): Array<{ receipt: string; leaseMs: number; metadata: Uint8Array | null }> | null {
  const list = reader.requiredArray(request, "items", 1, limits.idsPerRequestMax);
  if (list === null) return null;
  const items: Array<{ receipt: string; leaseMs: number; metadata: Uint8Array | null }> = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    reader.at("items", i);
    const source = reader.element(list[i]);
    if (source === null) return null;
    const receipt = reader.requiredString(source, "receipt", 0, limits.receiptBytesMax);
    const leaseMs = reader.requiredInt(source, "lease_ms", { min: 1, max: limits.leaseMsMax });
    const metadata = reader.bin(source, "metadata", limits.metadataBytesMax);
    if (reader.failure !== null || receipt === null || leaseMs === null) return null;
    items[i] = { receipt, leaseMs, metadata };
  }
  reader.top();
  return items;
}

export const extendOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const items = decodeExtend(request, ctx.limits, reader);
    if (items === null) return failed(reader.failure!);
    const result = ctx.engine.extend(ns, items, ctx.nowMs);
    if (!result.ok) return failed(result.failure);
    const { value, durable } = result.value;
    return reply({ extended: value.extended, stale: value.stale }, durable);
  },
});
