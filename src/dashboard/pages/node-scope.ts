// In cluster mode most figures are the whole cluster's (the ops, merged), but
// a few exist only in this node's process: the history charts, the server
// panel's commit latency and breaker, the oldest-ready ages and the matching
// view (engine inspect queries). These helpers label such a figure as this
// node's, so no one reads it as the cluster's; on a single node they add nothing.

import { html, type Html } from "../html.ts";
import type { PageContext } from "../page-context.ts";

export function isClusterNode(ctx: PageContext): boolean {
  return ctx.serverInfo.clusterMap !== undefined && ctx.serverInfo.clusterMap !== null;
}

/** A small badge after a figure's label: "this node (n1)". */
export function thisNodeBadge(ctx: PageContext): Html {
  if (!isClusterNode(ctx)) return html``;
  return html` <span class="badge node-only" title="only the shards this node serves; other nodes' dashboards show theirs">this node (${ctx.serverInfo.nodeId})</span>`;
}
