// A topic's policies (the `policies` op) and the bounds each of its groups
// runs under: the group's own policy when it has one, else the "*" default,
// else none (PROTOCOL.md, "Fair sharing and limits"). Items without a group
// (the nil group) cannot hold a policy of their own, since a `policy` request
// without `group` sets the topic's; only the default applies to them.

import type { Session } from "../server/op-types.ts";
import { duration } from "./format.ts";
import type { OpCaller } from "./op-caller.ts";
import { readPages } from "./op-pages.ts";
import { isWireMap, numberField, stringField, type WireMap } from "./wire-values.ts";

/**
 * Policies read per page view (5,000): the same bound as the groups read
 * (group-list.ts), so every listed group's own policy is found unless the
 * topic holds more policies than that.
 */
const policiesReadMax = 5000;

/** The name of the default policy's group in the contract. */
const defaultGroup = "*";

export interface PolicyView {
  weight?: number;
  maxLeased?: number;
  rate?: { count: number; perMs: number };
}

/** Where a group's bounds come from; `unread` when its own policy may lie past the policies read. */
export type BoundSource = "own" | "default" | "none" | "unread";

export interface GroupBounds {
  source: BoundSource;
  policy: PolicyView;
}

function policyFrom(entry: WireMap): PolicyView {
  const view: PolicyView = {};
  const weight = numberField(entry, "weight");
  const maxLeased = numberField(entry, "max_leased");
  if (weight !== undefined) view.weight = weight;
  if (maxLeased !== undefined) view.maxLeased = maxLeased;
  const rate = entry.rate;
  if (isWireMap(rate)) {
    const count = numberField(rate, "count");
    const perMs = numberField(rate, "per_ms");
    if (count !== undefined && perMs !== undefined) view.rate = { count, perMs };
  }
  return view;
}

const utf8 = new TextEncoder();

/** The contract orders group names by their UTF-8 bytes, which JavaScript's `<` on UTF-16 does not always match. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(utf8.encode(a), utf8.encode(b));
}

export class TopicPolicies {
  private constructor(
    /** The topic's own policy (bounds the whole topic), or null. */
    readonly topic: PolicyView | null,
    /** The "*" policy, or null. */
    readonly groupDefault: PolicyView | null,
    private readonly byGroup: ReadonlyMap<string, PolicyView>,
    /** The last group name read when the read stopped at its bound; null when every policy was read. */
    private readonly readUpTo: string | null,
  ) {}

  /** From the `policies` op's entries in its order (the topic's own first, then by group name). */
  static fromEntries(entries: readonly WireMap[], complete: boolean): TopicPolicies {
    let topic: PolicyView | null = null;
    let groupDefault: PolicyView | null = null;
    const byGroup = new Map<string, PolicyView>();
    let last = "";
    for (const entry of entries) {
      const group = stringField(entry, "group");
      if (group === undefined) topic = policyFrom(entry);
      else if (group === defaultGroup) groupDefault = policyFrom(entry);
      else byGroup.set(group, policyFrom(entry));
      if (group !== undefined) last = group;
    }
    return new TopicPolicies(topic, groupDefault, byGroup, complete ? null : last);
  }

  static async read(ops: OpCaller, session: Session, ns: string, topic: string): Promise<TopicPolicies> {
    const { entries, complete } = await readPages(ops, session, "policies", { ns, topic }, "policies", policiesReadMax);
    return TopicPolicies.fromEntries(entries, complete);
  }

  boundsOf(group: string | null): GroupBounds {
    const own = group === null ? undefined : this.byGroup.get(group);
    if (own !== undefined) return { source: "own", policy: own };
    if (group !== null && this.readUpTo !== null && byteOrder(group, this.readUpTo) > 0) return { source: "unread", policy: {} };
    if (this.groupDefault !== null) return { source: "default", policy: this.groupDefault };
    return { source: "none", policy: {} };
  }
}

/** "10 per 1 s", "3 per 250 ms". */
export function rateText(rate: { count: number; perMs: number }): string {
  const per = rate.perMs < 1000 || rate.perMs % 1000 !== 0 ? `${rate.perMs.toLocaleString("en-US")} ms` : duration(rate.perMs);
  return `${rate.count.toLocaleString("en-US")} per ${per}`;
}

/** A policy in words: "weight 2 · at most 5 leased · 10 per 1 s", or "no bounds". */
export function policyText(policy: PolicyView | null): string {
  if (policy === null) return "no bounds";
  const parts: string[] = [];
  if (policy.weight !== undefined) parts.push(`weight ${policy.weight}`);
  if (policy.maxLeased !== undefined) parts.push(`at most ${policy.maxLeased.toLocaleString("en-US")} leased`);
  if (policy.rate !== undefined) parts.push(rateText(policy.rate));
  return parts.length === 0 ? "no bounds" : parts.join(" · ");
}
