// The overview's cluster banner (cluster mode only): this node, the map
// version, every node with the shards it owns, and the shards no live node
// owns (their items are not served until a node takes them over). Read from
// the map hello and the `cluster` op return (ServerInfo.clusterMap).

import type { WireClusterMap } from "../../protocol/wire-types.ts";
import { html, type Html } from "../html.ts";
import type { PageContext } from "../page-context.ts";
import type { WireMap } from "../wire-values.ts";

/** Shard numbers as ranges: [0,1,2,5] → "0–2, 5". */
function shardRanges(shards: readonly number[]): string {
  const parts: string[] = [];
  let start = -1;
  let previous = -1;
  for (const shard of [...shards, -1]) {
    if (start >= 0 && shard === previous + 1) {
      previous = shard;
      continue;
    }
    if (start >= 0) parts.push(start === previous ? String(start) : `${start}–${previous}`);
    start = shard;
    previous = shard;
  }
  return parts.join(", ");
}

function nodeRows(map: WireClusterMap): Html[] {
  return map.nodes.map((node) => {
    const owned = map.owners.flatMap((owner, shard) => (owner === node.node_id ? [shard] : []));
    return html`<tr data-node="${node.node_id}"><td>${node.node_id}${node.node_id === map.node_id ? html` <span class="badge">this node</span>` : ""}</td>
<td>${node.addr}</td><td class="num" data-shard-count="${owned.length}">${owned.length}</td><td data-shards="${owned.join(",")}">${owned.length === 0 ? html`<span class="muted">none</span>` : shardRanges(owned)}</td></tr>`;
  });
}

/** `unanswered`: the nodes the merged `stats` could not ask (cluster-op-caller.ts), whose shards the counts below lack. */
export function clusterBanner(ctx: PageContext, unanswered: readonly WireMap[] = []): Html {
  const map = ctx.serverInfo.clusterMap?.() ?? null;
  if (map === null) return html``;
  const live = new Set(map.nodes.map((node) => node.node_id));
  const unowned = map.owners.flatMap((owner, shard) => (owner === null || !live.has(owner) ? [shard] : []));
  return html`<section class="panel" id="cluster-banner"><h2>Cluster</h2>
<p>This is node <b data-node-id>${map.node_id}</b> · map version <b data-map-version>${String(map.map_version)}</b> · ${String(map.nodes.length)} ${map.nodes.length === 1 ? "node" : "nodes"} · ${String(map.owners.length)} shards.
Counts, lists and actions cover the whole cluster; figures marked "this node" are this node's shards only.</p>
<table id="cluster-nodes"><thead><tr><th>node</th><th>address</th><th class="num">shards</th><th>which</th></tr></thead><tbody>${nodeRows(map)}</tbody></table>
${unowned.length === 0
    ? html`<p class="ok" id="unowned-shards" data-unowned="">Every shard has a live owner.</p>`
    : html`<p class="bad" id="unowned-shards" data-unowned="${unowned.join(",")}">No live owner: shard${unowned.length === 1 ? "" : "s"} ${shardRanges(unowned)}. Their items are not served, counted or listed until a node takes them over (within shard_lease_ms + 2 s of their owner's loss).</p>`}
${unanswered.length === 0
    ? ""
    : html`<p class="bad" id="unanswered-nodes">Did not answer, so the counts below lack their shards: ${unanswered.map((node) => html`<span data-unanswered="${String(node.node_id ?? node.addr)}">${String(node.node_id ?? node.addr)} (${String(node.error ?? "")})</span> `)}</p>`}
</section>`;
}
