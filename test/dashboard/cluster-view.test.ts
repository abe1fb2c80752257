// Goal: the dashboard's cluster view, without a cluster. The overview's banner
// shows this node, the map version, each node's shards as ranges and the
// shards with no live owner (null, or an owner the map no longer lists); the
// figures only this node has are labelled as this node's in cluster mode and
// not on a single node; and the cluster client's merged answers turned back
// into wire form equal what a node sends (cluster-wire.ts), field for field.

import { describe, expect, test } from "bun:test";
import { itemStateFromWire } from "../../src/client/item-wire.ts";
import { groupPageToWire, itemStateToWire, topicPageToWire } from "../../src/dashboard/cluster-wire.ts";
import { overviewPage } from "../../src/dashboard/pages/overview.ts";
import type { WireClusterMap, WireItemState } from "../../src/protocol/wire-types.ts";
import { pageFixture } from "./page-fixture.ts";

const stats = () => ({ namespaces: { shop: { ready: 3, delayed: 0, waiting: 0, leased: 0, dead: 1, topic_count: 1 } }, totals: { ready: 3, delayed: 0, waiting: 0, leased: 0, dead: 1, topics: 1 }, counters: {}, server: { uptime_ms: 1000, connections: 2 } });

async function overview(map: WireClusterMap | null): Promise<string> {
  const { ctx } = pageFixture("/?ns=shop", { stats });
  if (map !== null) ctx.serverInfo = { ...ctx.serverInfo, nodeId: map.node_id, clusterMap: () => map };
  const page = await overviewPage(ctx);
  return `${String(page.top ?? "")}${String(page.live ?? "")}`;
}

describe("cluster banner", () => {
  test("names this node, the map version, each node's shards as ranges, and says every shard has an owner", async () => {
    const text = await overview({ map_version: 7, node_id: "n1", nodes: [{ node_id: "n0", addr: "10.0.0.1:7420" }, { node_id: "n1", addr: "10.0.0.2:7420" }], owners: ["n0", "n0", "n0", "n1", "n1", "n0", "n1", "n1"] });
    expect(text).toContain('id="cluster-banner"');
    expect(text).toContain("<b data-node-id>n1</b>");
    expect(text).toContain("<b data-map-version>7</b>");
    expect(text).toContain('data-shards="0,1,2,5">0–2, 5</td>');
    expect(text).toContain('data-shards="3,4,6,7">3–4, 6–7</td>');
    expect(text).toContain('data-unowned=""');
    // Figures only this node has are labelled as its own.
    expect(text).toContain("this node (n1)");
  });

  test("lists the shards with no live owner: null, or an owner the map no longer names", async () => {
    const text = await overview({ map_version: 9, node_id: "n0", nodes: [{ node_id: "n0", addr: "a:1" }], owners: ["n0", null, "gone", "n0"] });
    expect(text).toContain('data-unowned="1,2"');
    expect(text).toContain("No live owner: shards 1–2.");
  });

  test("names the nodes a merged stats could not ask", async () => {
    const { ctx } = pageFixture("/?ns=shop", { stats: () => ({ ...stats(), unanswered_nodes: [{ node_id: "n2", addr: "c:3", error: "DISCONNECTED: closed" }] }) });
    const map: WireClusterMap = { map_version: 3, node_id: "n0", nodes: [{ node_id: "n0", addr: "a:1" }, { node_id: "n2", addr: "c:3" }], owners: ["n0", "n2"] };
    ctx.serverInfo = { ...ctx.serverInfo, nodeId: "n0", clusterMap: () => map };
    const text = String((await overviewPage(ctx)).live);
    expect(text).toContain('<span data-unanswered="n2">n2 (DISCONNECTED: closed)</span>');
  });

  test("a single node shows no banner and no per-node labels", async () => {
    const text = await overview(null);
    expect(text).not.toContain("cluster-banner");
    expect(text).not.toContain("this node (");
  });
});

describe("cluster answers back in wire form", () => {
  test("an item with every optional field, and one with none, come back as the node sent them", () => {
    const full: WireItemState = {
      id: "3:17", topic: "t", state: "dead", priority: 4, payload: new Uint8Array([1, 2]), metadata: new Uint8Array([3]), attempt: 2,
      deliver_at_ms: 10, enqueued_at_ms: 5, lease_expires_at_ms: 20, requires: { gpu: "h100" }, after: ["1:2"], key: "k", group: "g",
      prefers: { repo: { in: ["a"] } }, prefer_wait_ms: 300, trace: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", dead_reason: "max_attempts",
    } as WireItemState;
    expect(itemStateToWire(itemStateFromWire(full))).toEqual(full as unknown as Record<string, unknown>);
    const bare = { id: "0:1", topic: "t", state: "ready", priority: 0, payload: new Uint8Array(), metadata: new Uint8Array(), attempt: 0, deliver_at_ms: 1, enqueued_at_ms: 1 } as WireItemState;
    expect(itemStateToWire(itemStateFromWire(bare))).toEqual(bare as unknown as Record<string, unknown>);
  });

  test("topic and group pages keep counts, pauses and the cursor", () => {
    expect(topicPageToWire({ topics: [{ topic: "a", ready: 1, delayed: 2, waiting: 3, leased: 4, dead: 5, paused: true, pausedUntilMs: 99 }], next: "a" })).toEqual({
      topics: [{ topic: "a", ready: 1, delayed: 2, waiting: 3, leased: 4, dead: 5, paused: true, paused_until_ms: 99 }],
      next: "a",
    });
    expect(groupPageToWire({ groups: [{ group: null, ready: 1, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: false }], next: null })).toEqual({
      groups: [{ group: null, ready: 1, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: false }],
      next: null,
    });
  });
});
