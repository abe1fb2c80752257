// Policies in PostgreSQL (the `policy` op): one row per (ns, topic, group)
// in orq_policies, under store.ts's policyKey, and the counter in
// orq_policy_version that every commit writing policies raises. The rows are
// shared between running nodes by the poll shared-rows.ts describes, so a
// policy set on one node holds on every node within a poll
// (clusterLimits.pausePollMs); this file names the tables and says how a
// poll compares a row with the engine's policy.

import { decodePolicyRecord, encodePolicyRecord } from "../record-codec.ts";
import type { PolicyRecord } from "../record.ts";
import { policyKey } from "../store.ts";
import { createSharedTablesSql, type EngineRows, type RowScope, SharedRows, type SharedTables } from "./shared-rows.ts";

const policyTables: SharedTables = { rows: "orq_policies", version: "orq_policy_version" };

export const createPolicyTablesSql = createSharedTablesSql(policyTables);

/** The policy rows a store keeps (SharedRows of policy records). */
export type PolicyRows = SharedRows<PolicyRecord>;

export function policyRows(): PolicyRows {
  return new SharedRows(policyTables, { encode: encodePolicyRecord, decode: decodePolicyRecord, key: policyKey });
}

/** What a policy poll asks the engine about a topic's (group null), a group's or the default ("*") policy. */
export interface EnginePolicies {
  /** The stored policy the engine holds now, or null for none. */
  storedPolicy(ns: string, topic: string, group: string | null): PolicyRecord | null;
  /** Whether the engine's own write of the policy has not landed yet (queued, or in a commit). */
  writing(ns: string, topic: string, group: string | null): boolean;
}

/** The engine's policies as a poll asks them: it holds a row when its policy has the row's bounds (or it has none and there is no row). */
export function enginePolicyRows(engine: EnginePolicies): EngineRows<PolicyRecord> {
  return {
    writing: (scope: RowScope) => engine.writing(scope.ns, scope.topic, scope.group),
    holds: (scope: RowScope, seen: PolicyRecord | null) => samePolicy(engine.storedPolicy(scope.ns, scope.topic, scope.group), seen),
  };
}

/** Whether two policies of one scope set the same bounds (null: no policy). */
export function samePolicy(a: PolicyRecord | null, b: PolicyRecord | null): boolean {
  if (a === null || b === null) return a === b;
  return a.weight === b.weight && a.maxLeased === b.maxLeased && a.rate?.count === b.rate?.count && a.rate?.perMs === b.rate?.perMs;
}
