// The fair-sharing ops' shapes on the wire (`policy`, `policies`, `groups`,
// `explain`; the contract's "Fair sharing and limits") and their conversion to
// and from the client's camelCase types. Fields the server leaves out stay
// absent, so a policy reads back as it was stored.

import type { LiveStateName } from "../protocol/live-states.ts";
import type { WireMap } from "./transport.ts";
import type { ExplainReason, GroupCounts, ItemExplanation, Policy, PolicyInput, PolicyResult } from "./types.ts";

export interface WirePolicy {
  group?: string;
  weight?: number;
  max_leased?: number;
  rate?: { count: number; per_ms: number };
}

export interface WireGroupCounts {
  group: string | null;
  ready: number;
  delayed: number;
  waiting: number;
  leased: number;
  /** Not in every server's reply: the contract's table lists the other counts only. */
  dead?: number;
  paused?: boolean;
  paused_until_ms?: number;
}

interface WireExplainReason {
  reason: string;
  until_ms?: number;
  after?: string[];
  dead_reason?: string;
  leased?: number;
  max?: number;
  next_at_ms?: number;
  kinds?: Array<{ failed: string[] }>;
  ahead?: number;
}

export interface WireItemExplanation {
  id: string;
  state: LiveStateName;
  reasons: WireExplainReason[];
}

/** A `policy` request's fields (without ns): absent bounds are left out, which the contract reads as no such bound. */
export function policyRequestFields(topic: string, input: PolicyInput): WireMap {
  return {
    topic,
    group: input.group,
    weight: input.weight,
    max_leased: input.maxLeased,
    rate: input.rate === undefined ? undefined : { count: input.rate.count, per_ms: input.rate.perMs },
    clear: input.clear === true ? true : undefined,
  };
}

export function policyFromWire(p: WirePolicy): Policy {
  const policy: Policy = {};
  if (typeof p.group === "string") policy.group = p.group;
  if (typeof p.weight === "number") policy.weight = p.weight;
  if (typeof p.max_leased === "number") policy.maxLeased = p.max_leased;
  if (p.rate !== undefined && p.rate !== null) policy.rate = { count: p.rate.count, perMs: p.rate.per_ms };
  return policy;
}

/** The `policy` reply: the policy as stored, or whether `clear` found one. */
export function policyResultFromWire(reply: WireMap): PolicyResult {
  if (reply.policy !== undefined && reply.policy !== null) return { policy: policyFromWire(reply.policy as WirePolicy) };
  return { cleared: reply.cleared === true };
}

export function groupCountsFromWire(g: WireGroupCounts): GroupCounts {
  const counts: GroupCounts = {
    group: typeof g.group === "string" ? g.group : null,
    ready: g.ready,
    delayed: g.delayed,
    waiting: g.waiting,
    leased: g.leased,
    dead: g.dead ?? 0,
    paused: g.paused === true,
  };
  if (typeof g.paused_until_ms === "number") counts.pausedUntilMs = g.paused_until_ms;
  return counts;
}

export function explanationFromWire(e: WireItemExplanation | null): ItemExplanation | null {
  if (e === null || e === undefined) return null;
  return { id: e.id, state: e.state, reasons: (e.reasons ?? []).map(reasonFromWire) };
}

function reasonFromWire(r: WireExplainReason): ExplainReason {
  const reason: ExplainReason = { reason: r.reason };
  if (typeof r.until_ms === "number") reason.untilMs = r.until_ms;
  if (Array.isArray(r.after)) reason.after = r.after;
  if (typeof r.dead_reason === "string") reason.deadReason = r.dead_reason;
  if (typeof r.leased === "number") reason.leased = r.leased;
  if (typeof r.max === "number") reason.max = r.max;
  if (typeof r.next_at_ms === "number") reason.nextAtMs = r.next_at_ms;
  if (Array.isArray(r.kinds)) reason.kinds = r.kinds.map((kind) => ({ failed: Array.isArray(kind.failed) ? kind.failed : [] }));
  if (typeof r.ahead === "number") reason.ahead = r.ahead;
  return reason;
}
