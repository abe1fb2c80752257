// `orq stats`: counts by state per namespace, counters since the server
// started, and the server's own gauges. Without --ns (or ORQ_NS) it shows
// every namespace the token may see; with --ns, that namespace and its topics.
// Both views end with the unmatchable-items report when it has anything to
// say: per topic, the ready items no worker that asked may take, and the
// requirements that keep them (docs/MATCHING.md). --json prints the `stats`
// reply as the server sent it (docs/PROTOCOL.md).
//
// On a cluster every node answers for its own shards, so `orq stats` asks
// every node: the tables show the cluster's sum (client/cluster-merge.ts:
// counts and counters added, clocks the largest node's), followed by one row
// per node; --json prints the summed reply plus `nodes: [{node_id, addr,
// stats}]` (`error` instead of `stats` for a node that did not answer).

import type { Command } from "commander";
import type { NodeStats } from "../../client/cluster-client.ts";
import { liveStateNames as states } from "../../protocol/live-states.ts";
import { clientCommand, onRun } from "../client-command.ts";
import { block, stateHeadings, table } from "../output.ts";

type Fields = Record<string, unknown>;

function num(record: Fields | undefined, key: string): number {
  const value = record?.[key];
  return typeof value === "number" ? value : 0;
}

function fields(value: unknown): Fields {
  return typeof value === "object" && value !== null ? (value as Fields) : {};
}

function render(stats: Fields, showTopics: boolean): string {
  const namespaces = fields(stats.namespaces);
  const rows = Object.entries(namespaces).map(([name, value]) => {
    const ns = fields(value);
    return [name, ...states.map((s) => num(ns, s)), num(ns, "unmatchable"), num(ns, "topic_count"), num(ns, "parked_waiters")];
  });
  const totals = fields(stats.totals);
  const unmatchableTotal = Object.values(namespaces).reduce((sum: number, ns) => sum + num(fields(ns), "unmatchable"), 0);
  rows.push(["(total)", ...states.map((s) => num(totals, s)), unmatchableTotal, num(totals, "topics"), num(totals, "parked_waiters")]);
  const parts = [table(["NAMESPACE", ...stateHeadings, "UNMATCHABLE", "TOPICS", "WAITERS"], rows)];
  if (showTopics) {
    for (const [name, value] of Object.entries(namespaces)) {
      const topics = fields(fields(value).topics);
      const topicRows = Object.entries(topics).map(([topic, counts]) => [
        topic,
        ...states.map((s) => num(fields(counts), s)),
        // "-": no worker asked within the window, so there is nothing to judge by.
        fields(fields(counts).unmatchable).asked === true ? num(fields(fields(counts).unmatchable), "items") : "-",
      ]);
      if (topicRows.length > 0) parts.push(`topics of ${name}:\n${table(["TOPIC", ...stateHeadings, "UNMATCHABLE"], topicRows)}`);
    }
  }
  const unmatchable = unmatchableReport(namespaces);
  if (unmatchable.length > 0) parts.push(unmatchable.join("\n"));
  const counters = fields(stats.counters);
  parts.push(`since start: ${Object.entries(counters).map(([k, v]) => `${k} ${String(v)}`).join(", ")}`);
  const server = fields(stats.server);
  parts.push(
    block([
      ["connections", String(num(server, "connections"))],
      ["requests in flight", String(num(server, "requests_in_flight"))],
      ["uptime", `${Math.round(num(server, "uptime_ms") / 1000)} s`],
    ]),
  );
  return parts.join("\n\n");
}

/** Per topic with unmatchable items: how many, how many worker kinds asked, and the requirements that keep them. */
function unmatchableReport(namespaces: Fields): string[] {
  const lines: string[] = [];
  for (const [ns, nsValue] of Object.entries(namespaces)) {
    for (const [topic, counts] of Object.entries(fields(fields(nsValue).topics))) {
      const report = fields(fields(counts).unmatchable);
      const items = num(report, "items");
      if (items === 0) continue;
      if (lines.length === 0) lines.push("unmatchable (ready items no worker that asked in the last 10 minutes may take):");
      lines.push(`  ${ns} / ${topic}: ${items} items; ${num(report, "askers")} worker kinds asked`);
      const signatures = Array.isArray(report.signatures) ? report.signatures : [];
      for (const signature of signatures) {
        lines.push(`    requires ${JSON.stringify(fields(signature).requires)}: ${num(fields(signature), "items")} items`);
      }
      if (report.signatures_truncated === true) lines.push("    (more requirement sets than listed; see --json)");
    }
  }
  return lines;
}

/** One row per cluster node: its own counts by state and gauges, or why it did not answer. */
function renderNodes(nodes: NodeStats[]): string {
  const rows = nodes.map((node) => {
    if (node.stats === null) return [node.nodeId ?? "?", node.addr, `no answer: ${node.error ?? "unknown"}`];
    const totals = fields(node.stats.totals);
    const server = fields(node.stats.server);
    return [node.nodeId ?? "?", node.addr, ...states.map((s) => num(totals, s)), num(server, "connections"), `${Math.round(num(server, "uptime_ms") / 1000)} s`];
  });
  return `per node:\n${table(["NODE", "ADDR", ...stateHeadings, "CONNECTIONS", "UPTIME"], rows)}`;
}

function nodeToJson(node: NodeStats): Fields {
  return node.stats === null ? { node_id: node.nodeId, addr: node.addr, error: node.error ?? "no answer" } : { node_id: node.nodeId, addr: node.addr, stats: node.stats };
}

export function addStatsCommand(program: Command): void {
  const command = clientCommand(program, "stats", "counts by state, counters since start and server gauges (on a cluster: summed, and per node)");
  onRun(command, async (session) => {
    const client = await session.cluster();
    const { merged, nodes } = await client.stats(session.nsExplicit ? session.ns : undefined);
    if (!client.isCluster) return { json: merged, text: render(merged, session.nsExplicit) };
    return {
      json: { ...merged, nodes: nodes.map(nodeToJson) },
      text: `cluster of ${nodes.length} nodes (summed):\n\n${render(merged, session.nsExplicit)}\n\n${renderNodes(nodes)}`,
    };
  });
}
