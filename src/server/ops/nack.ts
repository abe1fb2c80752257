// nack: end each delivery now; the item is ready again after delay_ms (or a
// dead letter), with its metadata replaced when given.

import type { Limits } from "../../limits.ts";
import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";

export type NackInput = Array<{ receipt: string; delayMs: number | null; metadata: Uint8Array | null }>;

function decodeNack(request: Source, limits: Limits, reader: RequestReader): NackInput | null {
  const list = reader.requiredArray(request, "items", 1, limits.idsPerRequestMax);
  if (list === null) return null;
  const items: NackInput = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    reader.at("items", i);
    const source = reader.element(list[i]);
    if (source === null) return null;
    const receipt = reader.requiredString(source, "receipt", 0, limits.receiptBytesMax);
    const delayMs = reader.int(source, "delay_ms", { min: 0, max: limits.delayMsMax });
    const metadata = reader.bin(source, "metadata", limits.metadataBytesMax);
    if (reader.failure !== null || receipt === null) return null;
    items[i] = { receipt, delayMs, metadata };
  }
  reader.top();
  return items;
}

export const nackOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const items = decodeNack(request, ctx.limits, reader);
    if (items === null) return failed(reader.failure!);
    const result = ctx.engine.nack(ns, items, ctx.nowMs);
    if (!result.ok) return failed(result.failure);
    const { value, durable } = result.value;
    return reply({ nacked: value.nacked, stale: value.stale }, durable);
  },
});
