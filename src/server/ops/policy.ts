// policy: set (or with `clear`, remove) one policy of a topic: its own bounds
// (no `group`), the "*" default for groups, or one group's
// (engine/groups/policy-ops.ts). The request replaces the whole stored
// policy with the fields it gives; replies once the change is durable.

import type { RateBound } from "../../engine/api.ts";
import { failed, namespacedOp, reply, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type RequestFailure, type Source } from "../request-reader.ts";
import { policyViewToWire } from "./wire-encoding.ts";

/** uint32's largest value: the cap of a count or a period (per_ms: about 50 days). */
const uint32Max = 4_294_967_295;

export const policyOp: OpSpec = namespacedOp({
  needsAuth: true,
  allowedWhileDraining: false,
  changesState: true,
  handle(request: Source, ns: string, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const { limits } = ctx;
    const topic = reader.requiredString(request, "topic", 1, limits.topicBytesMax);
    const group = reader.string(request, "group", 1, limits.groupBytesMax);
    const weight = reader.int(request, "weight", { min: 1, max: limits.policyWeightMax });
    const maxLeased = reader.int(request, "max_leased", { min: 1, max: uint32Max });
    const clear = reader.bool(request, "clear") ?? false;
    const rateSource = reader.map(request, "rate");
    let rate: RateBound | null = null;
    if (rateSource !== null && reader.failure === null) {
      const count = reader.requiredInt(rateSource, "count", { min: 1, max: uint32Max });
      const perMs = reader.requiredInt(rateSource, "per_ms", { min: 1, max: uint32Max });
      // (Read again through a cast: the check above narrowed it to null, though the two reads may set it.)
      const failure = reader.failure as RequestFailure | null;
      if (failure !== null) failure.field = `rate.${failure.field}`;
      else rate = { count: count as number, perMs: perMs as number };
    }
    if (reader.failure === null && group === null && weight !== null) reader.fail("BAD_REQUEST", "weight", "weight applies to groups only: give `group` (a name, or \"*\")");
    if (reader.failure !== null || topic === null) return failed(reader.failure!);
    const result = ctx.engine.policy(ns, { topic, group, weight, maxLeased, rate, clear }, ctx.nowMs);
    if (!result.ok) return failed(result.failure);
    const { value, durable } = result.value;
    return reply("cleared" in value ? { cleared: value.cleared } : { policy: policyViewToWire(value.policy) }, durable);
  },
});
