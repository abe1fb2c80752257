// The `policy` and `policies` ops, and policies at start and from other
// nodes. A policy is stored (storage: PolicyRecord, one per topic and scope)
// and takes effect at once on the live topic: its own bounds and every
// group's (a "*" policy binds every group without its own), and a topic
// whose groups gain a policy starts rotating between them
// (ready/topic.ts's startRotation). In cluster mode other nodes' policies
// arrive through applyStored, as pauses do (storage/postgres/pause-rows.ts).

import { UnsettledWrites } from "../state/unsettled-writes.ts";
import { defaultGroupName, type PolicyTable } from "./policy-table.ts";
import type { PolicyRecord } from "../../storage/record.ts";
import { policyKey } from "../../storage/store.ts";
import type { PolicyInput, PolicyView, Reply, Result } from "../api.ts";
import { atTopic } from "../failures/failure-location.ts";
import { fail } from "../failures/failures.ts";
import type { LiveItem } from "../state/item.ts";
import type { ItemStates } from "../state/item-states.ts";
import { finishOp, type OpContext } from "../ops/op-context.ts";
import type { Topic } from "../ready/topic.ts";

function policyToView(record: PolicyRecord): PolicyView {
  const view: PolicyView = {};
  if (record.group !== null) view.group = record.group;
  if (record.weight !== null) view.weight = record.weight;
  if (record.maxLeased !== null) view.maxLeased = record.maxLeased;
  if (record.rate !== null) view.rate = { count: record.rate.count, perMs: record.rate.perMs };
  return view;
}

export class PolicyOps {
  /** This engine's writes of these records whose commit has not settled, by key. */
  private readonly writesUnsettled: UnsettledWrites;

  constructor(private readonly states: ItemStates) {
    this.writesUnsettled = new UnsettledWrites((hook) => states.afterCommit(hook));
  }

  private get table(): PolicyTable {
    return this.states.namespaces.policies;
  }

  policy(ctx: OpContext, nsName: string, input: PolicyInput, nowMs: number): Result<Reply<{ policy: PolicyView } | { cleared: boolean }>> {
    const { topic, group } = input;
    if (input.clear) {
      const had = this.table.of(nsName, topic)?.get(group) ?? null;
      if (had === null) return { ok: true, value: { value: { cleared: false }, durable: null } };
      this.apply(nsName, topic, group, null, nowMs);
      this.write(nsName, topic, group, null);
      return finishOp(ctx, { cleared: true }, nowMs);
    }
    const existing = this.table.of(nsName, topic)?.get(group) ?? null;
    if (existing === null && this.table.size >= this.states.limits.policiesMax) {
      return fail("over_limit", `the server already holds ${this.states.limits.policiesMax} policies (policies_max)`, { at: atTopic });
    }
    const record: PolicyRecord = { ns: nsName, topic, group, weight: input.weight, maxLeased: input.maxLeased, rate: input.rate };
    this.apply(nsName, topic, group, record, nowMs);
    this.write(nsName, topic, group, record);
    return finishOp(ctx, { policy: policyToView(record) }, nowMs);
  }

  /** A page of a topic's policies: its own first, then by group name; `after` names the last entry given ("" for the topic's own). */
  policies(nsName: string, topic: string, query: { limit: number; after: string | null }): { policies: PolicyView[]; next: string | null } {
    const sorted = this.table.of(nsName, topic)?.sorted() ?? [];
    const after = query.after;
    let start = 0;
    if (after !== null) {
      start = sorted.length;
      for (let i = 0; i < sorted.length; i++) {
        const name = (sorted[i] as PolicyRecord).group;
        if (after === "" ? name !== null : name !== null && name > after) {
          start = i;
          break;
        }
      }
    }
    const page = sorted.slice(start, start + query.limit);
    const more = start + page.length < sorted.length;
    const last = page[page.length - 1];
    return { policies: page.map(policyToView), next: more && last !== undefined ? (last.group ?? "") : null };
  }

  /** The stored policy of a scope now (cluster mode compares it with the database's). */
  stored(nsName: string, topic: string, group: string | null): PolicyRecord | null {
    return this.table.of(nsName, topic)?.get(group) ?? null;
  }

  writing(nsName: string, topic: string, group: string | null): boolean {
    return this.writesUnsettled.has(policyKey(nsName, topic, group));
  }

  /** Cluster mode: another node committed this policy (null: cleared); change this engine to match, writing nothing. */
  applyStored(nsName: string, topic: string, group: string | null, record: PolicyRecord | null, nowMs: number): void {
    this.apply(nsName, topic, group, record, nowMs);
  }

  /** Install the stored policies at start (before items load, so topics made while loading find them). */
  load(records: Iterable<PolicyRecord>, nowMs: number): void {
    for (const record of records) {
      this.apply(record.ns, record.topic, record.group, record, nowMs);
      this.table.of(record.ns, record.topic)?.markLoaded(record, nowMs);
    }
  }

  /** Change the table and the live topic, if there is one. */
  private apply(nsName: string, topicName: string, group: string | null, record: PolicyRecord | null, nowMs: number): void {
    const policies = this.table.set(record, nsName, topicName, group, nowMs);
    const topic = this.states.namespaces.get(nsName)?.topics.get(topicName);
    if (topic === undefined) return;
    topic.policies = policies;
    if (this.reapply(topic, group)) this.states.boundReleased(topic);
  }

  /** Read the topic's policies again into its bounds and groups; true when something may deliver again. */
  private reapply(topic: Topic<LiveItem>, group: string | null): boolean {
    let released = false;
    if (group === null) return topic.applyOwnPolicy();
    if (topic.policies?.hasGroupPolicies === true || topic.rotation !== null) {
      const rotation = topic.startRotation();
      if (group === defaultGroupName) {
        if (topic.applyPolicy(rotation.nil)) released = true;
        for (const each of rotation.named.values()) if (topic.applyPolicy(each)) released = true;
      } else {
        const named = rotation.named.get(group);
        if (named !== undefined && topic.applyPolicy(named)) released = true;
      }
    }
    return released;
  }

  private write(nsName: string, topic: string, group: string | null, record: PolicyRecord | null): void {
    const states = this.states;
    if (record === null) states.ws().deletePolicy(nsName, topic, group);
    else states.ws().putPolicy(record);
    const key = policyKey(nsName, topic, group);
    this.writesUnsettled.add(key);
  }
}
