// Goal: the dashboard in cluster mode shows the whole cluster and acts on the
// node that owns an item. Two real nodes on one real PostgreSQL, with tokens:
// a person signs in to node A's dashboard over HTTP and sees items that sit on
// shards node B owns (topic counts summed with A's own, the topic's list, the
// item page, the dead letters), the overview's cluster banner with both nodes;
// a cancel and a redrive of B's dead letters from A's dead-letter page take
// effect on B, and so does removing a schedule stored on B's shard. A read-only token's forged cancel is refused by B as it would
// be over TCP, and a token scoped to another namespace sees nothing of it:
// signing in to A's dashboard gains nothing over the token. With B killed,
// A's overview still answers and names B as the node its counts lack.
// Skipped without PostgreSQL (unless ORQ_REQUIRE_POSTGRES=1).

import { describe, expect, test } from "bun:test";
import { OrqClient } from "../../src/client/client.ts";
import type { ItemState } from "../../src/client/types.ts";
import { ClusterHarness, clusterPerTest, retrying, type WireMap } from "../support/cluster-harness.ts";
import { postgresAvailable } from "../support/postgres-server.ts";
import type { ServerProcess } from "../support/server-process.ts";

const ns = "default";
const config = {
  auth: {
    tokens: [
      { token: "admin-token", namespaces: ["*"] },
      { token: "reader-token", namespaces: ["*"], role: "read" },
      { token: "shop-token", namespaces: ["shop"] },
    ],
  },
};

function dashboardUrl(node: ServerProcess): string {
  for (const line of node.stdoutLines) {
    const match = /^orq dashboard on (http:\/\/\S+)\/$/.exec(line);
    if (match !== null) return match[1] as string;
  }
  throw new Error(`no dashboard line:\n${node.logs()}`);
}

/** A signed-in browser, as far as the dashboard can tell: its cookie, and the Origin a page of the dashboard sends. */
class DashboardUser {
  private constructor(
    readonly url: string,
    private readonly cookie: string,
  ) {}

  static async signIn(url: string, token: string): Promise<DashboardUser> {
    const response = await fetch(`${url}/signin`, { method: "POST", redirect: "manual", headers: { origin: url, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token }) });
    expect(response.status).toBe(303);
    const cookie = /^(orq_session=[^;]+)/.exec(response.headers.get("set-cookie") ?? "")?.[1];
    if (cookie === undefined) throw new Error("no session cookie");
    return new DashboardUser(url, cookie);
  }

  async page(path: string): Promise<{ status: number; text: string }> {
    const response = await fetch(`${this.url}${path}`, { headers: { cookie: this.cookie }, redirect: "manual" });
    return { status: response.status, text: await response.text() };
  }

  async post(path: string, form: Record<string, string | string[]>): Promise<{ status: number; location: string | null; text: string }> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(form)) for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
    const response = await fetch(`${this.url}${path}`, { method: "POST", redirect: "manual", headers: { cookie: this.cookie, origin: this.url, "content-type": "application/x-www-form-urlencoded" }, body });
    return { status: response.status, location: response.headers.get("location"), text: await response.text() };
  }

  /** The session's CSRF token, from any page's forms. */
  async csrf(): Promise<string> {
    const token = /name="csrf" value="([^"]+)"/.exec((await this.page(`/dead?ns=${ns}`)).text)?.[1];
    if (token === undefined) throw new Error("no CSRF field");
    return token;
  }
}

/** The count a topics-page row shows in one state column. */
function topicCount(text: string, topic: string, state: string): number {
  const row = new RegExp(`<tr data-topic="${topic}">([\\s\\S]*?)</tr>`).exec(text)?.[1] ?? "";
  return Number(new RegExp(`data-count="${state}">([\\d,]+)<`).exec(row)?.[1]?.replace(/,/g, "") ?? Number.NaN);
}

async function itemOn(client: OrqClient, id: string): Promise<ItemState | { state: "ended"; outcome: string } | null> {
  return (await client.get(ns, [id]))[0] as ItemState | { state: "ended"; outcome: string } | null;
}

/** Poll a node's map (the `cluster` op, which needs the token) until `done` holds; at most 30 s. */
async function balancedMap(client: OrqClient, done: (map: WireMap) => boolean): Promise<WireMap> {
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    const map = (await client.request("cluster")).cluster as WireMap;
    if (done(map)) return map;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the two nodes never shared the shards");
}

describe.skipIf(!postgresAvailable())("the dashboard in cluster mode", () => {
  const clusters = clusterPerTest();

  test("node A's dashboard shows node B's items and acts on them on B; the token's rights are all it has", async () => {
    const cluster = await clusters.start({ label: "dashboard", nodes: 2, shards: 4, leaseMs: 60_000, config });
    const [nodeA, nodeB] = cluster.nodes as [ServerProcess, ServerProcess];
    const a = await OrqClient.connect({ host: nodeA.host, port: nodeA.port, token: "admin-token", reconnect: false });
    const b = await OrqClient.connect({ host: nodeB.host, port: nodeB.port, token: "admin-token", reconnect: false });
    try {
      const balanced = ClusterHarness.balanced(["n0", "n1"], 4);
      const map = await balancedMap(a, balanced);
      await balancedMap(b, balanced);
      // Plain items go to a shard of the node asked: three on B, two on A.
      const onB = await retrying(() => b.enqueue(ns, [{ topic: "jobs", payload: "b0" }, { topic: "jobs", payload: "b1" }, { topic: "jobs", payload: "b2" }]));
      await retrying(() => a.enqueue(ns, [{ topic: "jobs", payload: "a0" }, { topic: "jobs", payload: "a1" }]));
      const ownerOf = (id: string): string | null => map.owners[Number(id.split(":")[0])] ?? null;
      expect(onB.map(ownerOf)).toEqual(["n1", "n1", "n1"]);
      // Three dead letters on B: one attempt each, nacked.
      const dying = await retrying(() => b.enqueue(ns, [0, 1, 2].map((i) => ({ topic: "dying", payload: `d${i}`, maxAttempts: 1 }))));
      const deliveries = await b.dequeue(ns, { topics: [{ topic: "dying", count: 3 }] });
      expect(deliveries).toHaveLength(3);
      await b.nack(ns, deliveries.map((d) => ({ receipt: d.receipt })));
      for (const id of dying) expect((await itemOn(b, id))?.state).toBe("dead");

      const admin = await DashboardUser.signIn(dashboardUrl(nodeA), "admin-token");
      const overview = await admin.page(`/?ns=${ns}`);
      expect(overview.status).toBe(200);
      expect(overview.text).toContain('id="cluster-banner"');
      expect(overview.text).toContain("<b data-node-id>n0</b>");
      expect(overview.text).toContain('<tr data-node="n0">');
      expect(overview.text).toContain('<tr data-node="n1">');
      expect(overview.text).toContain('data-unowned=""');

      const topics = await admin.page(`/topics?ns=${ns}`);
      expect(topicCount(topics.text, "jobs", "ready")).toBe(5);
      expect(topicCount(topics.text, "dying", "dead")).toBe(3);
      const topic = await admin.page(`/topic?ns=${ns}&topic=jobs`);
      for (const id of onB) expect(topic.text).toContain(`data-item="${id}"`);
      const item = await admin.page(`/item?ns=${ns}&id=${encodeURIComponent(onB[0] as string)}`);
      expect(item.status).toBe(200);
      expect(item.text).toContain('data-state="ready"');
      expect(item.text).toContain("b0");
      const dead = await admin.page(`/dead?ns=${ns}&topic=dying`);
      for (const id of dying) expect(dead.text).toContain(`data-item="${id}"`);

      // Cancel one of B's dead letters and redrive another, from A's dead-letter page.
      const csrf = await admin.csrf();
      const [cancelled, redriven, untouched] = dying as [string, string, string];
      const cancel = await admin.post("/dead/apply", { csrf, ns, topic: "dying", action: "cancel", id: cancelled });
      expect(cancel.status).toBe(303);
      expect(cancel.location).toContain("done=cancel&n=1");
      expect(await itemOn(b, cancelled)).toMatchObject({ state: "ended", outcome: "cancelled" });
      const redrive = await admin.post("/dead/apply", { csrf, ns, topic: "dying", action: "redrive", id: redriven });
      expect(redrive.status).toBe(303);
      expect(redrive.location).toContain("done=redrive&n=1");
      expect((await itemOn(b, redriven))?.state).toBe("ready");

      // A schedule stored on B's shard (set through B: its item goes to a shard of B's), removed from A's schedules page.
      await retrying(() => b.schedule(ns, { name: "hourly", everyMs: 3_600_000, item: { topic: "ticks" } }));
      expect((await admin.page(`/schedules?ns=${ns}`)).text).toContain("hourly");
      const removed = await admin.post("/schedule/remove", { csrf, ns, name: "hourly" });
      expect(removed.status).toBe(303);
      expect(removed.location).toContain("done=schedule-removed");
      expect((await b.schedules(ns)).schedules.map((schedule) => schedule.name)).toEqual([]);

      // A read-only token signed in to A: B refuses its forged cancel, as it refuses the token over TCP.
      const reader = await DashboardUser.signIn(dashboardUrl(nodeA), "reader-token");
      expect(topicCount((await reader.page(`/topics?ns=${ns}`)).text, "dying", "dead")).toBe(1);
      const forged = await reader.post("/dead/apply", { csrf: await reader.csrf(), ns, topic: "dying", action: "cancel", id: untouched });
      expect(forged.status).toBe(403);
      expect(forged.text).toContain("FORBIDDEN");
      expect((await itemOn(b, untouched))?.state).toBe("dead");
      // A token scoped to another namespace sees nothing of this one's, on any node.
      const shop = await DashboardUser.signIn(dashboardUrl(nodeA), "shop-token");
      expect((await shop.page(`/topics?ns=${ns}`)).status).toBe(403);
      expect((await shop.page(`/item?ns=${ns}&id=${encodeURIComponent(onB[0] as string)}`)).status).toBe(403);

      // B gone (killed: the map names it until its lease runs out): A's overview still answers and says whose shards its counts lack.
      await nodeB.stop("SIGKILL");
      const short = await admin.page(`/?ns=${ns}`);
      expect(short.status).toBe(200);
      expect(short.text).toContain('data-unanswered="n1"');
      expect(short.text).toContain('<tr data-node="n1">');
    } finally {
      await a.close();
      await b.close();
    }
  }, 120_000);
});
