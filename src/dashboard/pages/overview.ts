// Overview: totals by state per namespace (the `stats` op, so a scoped token
// sees only its namespaces), rate and depth charts from the history ring,
// and the server panel (version, uptime, connections, commit latency,
// storage breaker, the ring of recent items' payloads). In cluster mode a banner shows the shard map, the counts
// are the whole cluster's and the charts and commit figures this node's.

import { liveStateNames as states } from "../../protocol/live-states.ts";
import { count, duration } from "../format.ts";
import { html, query, type Html } from "../html.ts";
import type { PageContext, PageResult, ServerPanel } from "../page-context.ts";
import { unansweredNodesField } from "../cluster-op-caller.ts";
import { wireMaps } from "../wire-values.ts";
import { clusterBanner } from "./cluster-banner.ts";
import { isClusterNode, thisNodeBadge } from "./node-scope.ts";

function countsRow(label: Html | string, entry: Record<string, unknown>): Html {
  return html`<tr><th scope="row">${label}</th>${states.map((s) => html`<td class="num" data-count="${s}">${count(entry[s])}</td>`)}<td class="num">${count(entry.topic_count ?? entry.topics)}</td></tr>`;
}

function serverPanel(ctx: PageContext, server: Record<string, unknown>): Html {
  const panel = ctx.serverPanel();
  const healthy = panel.breaker === "closed";
  const breakerText = healthy ? "closed (healthy: commits succeed)" : `${panel.breaker}: failed commits stopped writes (docs/STORAGE.md)`;
  const ms = (v: number | null): string => (v === null ? "–" : `${v.toFixed(2)} ms`);
  // In cluster mode `stats` is every node's summed: connections are the cluster's, the uptime the longest.
  const whole = isClusterNode(ctx) ? html` <span class="muted">(all nodes)</span>` : "";
  return html`<section class="panel" id="server-panel"><h2>Server</h2><dl>
<dt>version</dt><dd>${ctx.serverInfo.version}</dd>
<dt>node</dt><dd>${ctx.serverInfo.nodeId}</dd>
<dt>uptime</dt><dd>${duration(Number(server.uptime_ms))}${isClusterNode(ctx) ? html` <span class="muted">(longest of all nodes)</span>` : ""}</dd>
<dt>connections</dt><dd data-server="connections">${count(server.connections)}${whole}</dd>
<dt>commit latency${thisNodeBadge(ctx)}</dt><dd>p50 ${ms(panel.commitMsP50)}, p99 ${ms(panel.commitMsP99)} <span class="muted">(last ${panel.commitSamples} commits)</span></dd>
<dt>storage breaker${thisNodeBadge(ctx)}</dt><dd class="${healthy ? "ok" : "bad"}">${breakerText}</dd>
${recentValuesRow(panel.recentValues)}
</dl></section>`;
}

/** The LMDB store's ring of recent items' payloads (--recent-values-mb, docs/decisions/044-recent-values.md): memory it holds, deliveries it served. */
function recentValuesRow(recent: ServerPanel["recentValues"]): Html | string {
  if (recent === null) return "";
  const mib = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  const reads = recent.hits + recent.misses;
  const share = reads === 0 ? "no delivery yet" : `${((recent.hits / reads) * 100).toFixed(1)}% of ${count(reads)} deliveries read from memory`;
  return html`<dt>recent payloads in memory</dt><dd id="recent-values">${mib(recent.bytes)} of ${mib(recent.ringBytes)}; ${share} <span class="muted">(the rest from the data file)</span></dd>`;
}

export async function overviewPage(ctx: PageContext): Promise<PageResult> {
  // The charts show ctx.ns: refuse a namespace outside the token's scope, as its chart data would be.
  ctx.inspector.check(ctx.session.opSession, "overview", ctx.ns);
  const stats = await ctx.ops.callOrThrow(ctx.session.opSession, "stats", {});
  const namespaces = (stats.namespaces ?? {}) as Record<string, Record<string, unknown>>;
  const totals = (stats.totals ?? {}) as Record<string, unknown>;
  const counters = (stats.counters ?? {}) as Record<string, unknown>;
  // stats marks a namespace kept in memory only (durability "memory"): its items are lost at a restart.
  const inMemory = Object.entries(namespaces).filter(([, entry]) => entry.durability === "memory").map(([ns]) => ns);
  const rows = Object.entries(namespaces).map(([ns, entry]) =>
    countsRow(html`<a href="/topics${query({ ns })}">${ns}</a>${entry.durability === "memory" ? html` <span class="badge warn" title="kept in memory only">in memory</span>` : ""}`, entry),
  );
  const live = html`${clusterBanner(ctx, wireMaps(stats[unansweredNodesField]))}<div class="columns">
<section class="panel"><h2>Items by state</h2>
<table id="state-totals"><thead><tr><th>namespace</th>${states.map((s) => html`<th class="num">${s}</th>`)}<th class="num">topics</th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="7" class="muted">no namespace holds items yet</td></tr>` : rows}</tbody>
<tfoot>${countsRow("total", totals)}</tfoot></table>
${inMemory.length === 0 ? "" : html`<p class="bad" id="memory-namespaces">In memory only, never written to disk: ${inMemory.join(", ")}. A restart starts ${inMemory.length === 1 ? "it" : "them"} empty: every item, outcome, pause and policy in ${inMemory.length === 1 ? "it" : "them"} is lost.</p>`}
<p class="muted">Since start: ${count(counters.enqueued)} enqueued, ${count(counters.delivered)} delivered, ${count(counters.acked)} acked, ${count(counters.nacked)} nacked, ${count(counters.dead)} dead-lettered.</p>
</section>
${serverPanel(ctx, (stats.server ?? {}) as Record<string, unknown>)}
</div>`;
  const range = ctx.url.searchParams.get("range") === "day" ? "day" : "hour";
  const tracked = ctx.history.hasNamespace(ctx.ns);
  const chart = (kind: string, title: string): Html =>
    html`<figure class="chart-box"><figcaption>${title}${thisNodeBadge(ctx)}</figcaption><div class="chart" data-chart="/api/history${query({ ns: ctx.ns, kind, range })}"></div></figure>`;
  const top = html`<section class="charts">
<p>Namespace <b>${ctx.ns}</b>, last ${range === "hour" ? "hour (5 s samples)" : "day (1 min samples)"} ·
<a href="/${query({ ns: ctx.ns, range: "hour" })}">hour</a> · <a href="/${query({ ns: ctx.ns, range: "day" })}">day</a></p>
${tracked ? "" : html`<p class="muted">No history for this namespace yet (it starts with the first sample after the namespace appears, for at most the first namespaces and topics: see docs/DASHBOARD.md).</p>`}
<div class="columns">${chart("rates", "Rates (per second)")}${chart("depths", "Items by state")}</div>
</section>`;
  return { title: "Overview", live, top };
}
