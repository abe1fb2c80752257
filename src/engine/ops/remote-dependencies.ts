// Cluster mode: `after` dependencies on shards this node does not serve. Such
// an id is unknown to the engine (its item lives in another node's memory),
// so enqueue and recovery count it as live and the item waits; the node
// (src/cluster/) polls the database for how the ids this engine waits on
// ended, and reports each end here, which releases or kills the dependents
// exactly as a local end would.

import type { ItemStates } from "../state/item-states.ts";
import type { OpContext } from "./op-context.ts";

/** How an `after` dependency on another node's shard ended. */
export type RemoteEnd = "acked" | "cancelled" | "expired" | "dead";

/** Up to `max` ids items wait on that `elsewhere` says live on other nodes' shards. */
export function remoteWaitedOn(states: ItemStates, elsewhere: (id: string) => boolean, max: number): string[] {
  const ids: string[] = [];
  if (states.graph.edgeCount === 0) return ids;
  for (const id of states.graph.dependencyIds()) {
    if (ids.length >= max) break;
    if (elsewhere(id)) ids.push(id);
  }
  return ids;
}

/** A dependency on another node's shard ended: its dependents become ready, or dead letters. */
export function remoteDependencyEnded(ctx: OpContext, id: string, how: RemoteEnd, nowMs: number): void {
  const states = ctx.states;
  if (how === "acked") states.dependencyAcked(id, nowMs);
  else states.killDependents(id, how);
  states.endSetBackground();
  ctx.wake(nowMs);
}
