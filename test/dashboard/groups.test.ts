// Goal: a topic page's groups part reads the `groups` and `policies` ops as
// the contract shapes them: each group's bounds are its own policy, else the
// "*" default, else none (the nil group takes only the default); rows sort
// by name or by backlog (ready + delayed + waiting) with ties in name order;
// 50 rows a page; a group's pause form posts `group` through the same action
// as the topic's, with the CSRF token; names are escaped; a failing op is
// shown in place and the items stay.

import { describe, expect, test } from "bun:test";
import { runAction } from "../../src/dashboard/actions.ts";
import { backlog, groupRowFrom, groupsReadMax, sortGroups } from "../../src/dashboard/group-list.ts";
import { policyText, rateText, TopicPolicies } from "../../src/dashboard/group-policies.ts";
import { topicPage } from "../../src/dashboard/pages/topic.ts";
import { fixtureCsrf, pageFixture, type Fields, type Script } from "./page-fixture.ts";

const hostile = `<img src=x onerror=alert(1)>`;

function group(name: string | null, ready: number, extra: Fields = {}): Fields {
  return { group: name, ready, delayed: 0, waiting: 0, leased: 0, paused: false, ...extra };
}

/** A topic `orders` with the given groups and policies, and one item. */
function topicScript(groups: Fields[], policies: Fields[]): Script {
  return {
    topics: () => ({ topics: [{ topic: "orders", ready: 1, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: false }] }),
    list: () => ({ items: [{ id: "1-1", topic: "orders", state: "ready", priority: 0, attempt: 0, enqueued_at_ms: 0, payload: new Uint8Array(0) }] }),
    groups: () => ({ groups }),
    policies: () => ({ policies }),
  };
}

async function topicHtml(path: string, script: Script, options: { readOnly?: boolean } = {}) {
  const fixture = pageFixture(path, script, options);
  const page = await topicPage(fixture.ctx);
  return { text: String(page.live), requests: fixture.requests };
}

/** The data-group attributes of the groups table's rows, in order. */
function rowOrder(text: string): string[] {
  const table = text.slice(text.indexOf('<table id="groups"'));
  return [...table.matchAll(/<tr data-group="([^"]*)">/g)].map((m) => m[1] as string);
}

describe("group rows", () => {
  test("backlog is ready + delayed + waiting; leased is not backlog", () => {
    expect(backlog(groupRowFrom(group("a", 2, { delayed: 3, waiting: 4, leased: 100 })))).toBe(9);
  });

  test("the nil group reads as null; a pause end is kept; a field of the wrong type reads as 0", () => {
    const row = groupRowFrom({ group: null, ready: "7", delayed: 1, waiting: 0, leased: 0, paused: true, paused_until_ms: 5000 });
    expect(row).toEqual({ group: null, ready: 0, delayed: 1, waiting: 0, leased: 0, paused: true, pausedUntilMs: 5000 });
  });

  test("by backlog, either direction, ties keep the op's name order; by name, the op's order or its reverse", () => {
    const rows = [group(null, 5), group("a", 1), group("b", 5), group("c", 9)].map(groupRowFrom);
    const names = (sorted: ReturnType<typeof sortGroups>) => sorted.map((r) => r.group);
    expect(names(sortGroups(rows, "backlog", true))).toEqual(["c", null, "b", "a"]);
    expect(names(sortGroups(rows, "backlog", false))).toEqual(["a", null, "b", "c"]);
    expect(names(sortGroups(rows, "group", false))).toEqual([null, "a", "b", "c"]);
    expect(names(sortGroups(rows, "group", true))).toEqual(["c", "b", "a", null]);
  });
});

describe("group bounds", () => {
  const entries = [
    { max_leased: 10, rate: { count: 100, per_ms: 1000 } },
    { group: "*", weight: 2, max_leased: 3 },
    { group: "gold", weight: 5 },
  ];

  test("own policy first, else the * default; the nil group takes only the default", () => {
    const policies = TopicPolicies.fromEntries(entries, true);
    expect(policies.topic).toEqual({ maxLeased: 10, rate: { count: 100, perMs: 1000 } });
    expect(policies.boundsOf("gold")).toEqual({ source: "own", policy: { weight: 5 } });
    expect(policies.boundsOf("silver")).toEqual({ source: "default", policy: { weight: 2, maxLeased: 3 } });
    expect(policies.boundsOf(null)).toEqual({ source: "default", policy: { weight: 2, maxLeased: 3 } });
    const bare = TopicPolicies.fromEntries([{ group: "gold", weight: 5 }], true);
    expect(bare.topic).toBeNull();
    expect(bare.boundsOf("silver")).toEqual({ source: "none", policy: {} });
  });

  test("when the read stopped at its bound, a group past the last name read is not known to have no policy", () => {
    const policies = TopicPolicies.fromEntries(entries, false);
    expect(policies.boundsOf("alpha").source).toBe("default");
    expect(policies.boundsOf("gold").source).toBe("own");
    expect(policies.boundsOf("zeta").source).toBe("unread");
  });

  test("policies and rates in words", () => {
    expect(policyText(null)).toBe("no bounds");
    expect(policyText({})).toBe("no bounds");
    expect(policyText({ weight: 2, maxLeased: 1500, rate: { count: 10, perMs: 60_000 } })).toBe("weight 2 · at most 1,500 leased · 10 per 1 min");
    expect(rateText({ count: 3, perMs: 250 })).toBe("3 per 250 ms");
    expect(rateText({ count: 3, perMs: 1500 })).toBe("3 per 1,500 ms");
  });
});

describe("the topic page's groups", () => {
  const groups = [group(null, 2), group("acme", 1, { delayed: 1 }), group("big", 30, { paused: true, paused_until_ms: Date.UTC(2026, 11, 1, 13) }), group(hostile, 5)];
  const policies = [{ max_leased: 10 }, { group: "*", weight: 2 }, { group: "big", max_leased: 4, rate: { count: 5, per_ms: 1000 } }];

  test("rows by name at first, each with counts, backlog, bounds and state; the topic's own policy above", async () => {
    const { text, requests } = await topicHtml("/topic?ns=shop&topic=orders", topicScript(groups, policies));
    expect(rowOrder(text)).toEqual(["", "acme", "big", "&lt;img src=x onerror=alert(1)&gt;"]);
    expect(text).toContain('<span id="topic-policy">at most 10 leased</span>');
    expect(text).toContain('<span id="default-policy">weight 2</span>');
    const big = text.slice(text.indexOf('<tr data-group="big">'));
    expect(big).toMatch(/data-count="backlog">30</);
    expect(big).toMatch(/data-bound="max_leased">4</);
    expect(big).toMatch(/data-bound="rate">5 per 1 s</);
    expect(big).toMatch(/data-bound="source">own policy</);
    expect(big).toMatch(/data-paused="yes"><span class="badge warn">paused until 2026-12-01 13:00:00Z/);
    expect(text.slice(text.indexOf('<tr data-group="acme">'))).toMatch(/data-bound="weight">2<.*?data-bound="source">default \(\*\)</s);
    expect(text).not.toContain("<img");
    const asked = requests.filter((r) => r.op === "groups" || r.op === "policies");
    expect(asked.map((r) => [r.op, r.ns, r.topic, r.limit])).toEqual([["policies", "shop", "orders", 1000], ["groups", "shop", "orders", 1000]]);
  });

  test("sorted by backlog: largest first on the first click, then smallest first", async () => {
    const first = await topicHtml("/topic?ns=shop&topic=orders", topicScript(groups, policies));
    const link = /href="([^"]*)" data-sort="backlog"/.exec(first.text)?.[1]?.replaceAll("&amp;", "&") as string;
    expect(new URL(link, "http://x").searchParams.get("groups_dir")).toBe("desc");
    const desc = await topicHtml(link, topicScript(groups, policies));
    expect(rowOrder(desc.text)).toEqual(["big", "&lt;img src=x onerror=alert(1)&gt;", "", "acme"]);
    const asc = await topicHtml("/topic?ns=shop&topic=orders&groups_sort=backlog&groups_dir=asc", topicScript(groups, policies));
    expect(rowOrder(asc.text)).toEqual(["", "acme", "&lt;img src=x onerror=alert(1)&gt;", "big"]);
  });

  test("a named group gets a pause or resume form with its name and the CSRF token; the nil group none; read-only none at all", async () => {
    const { text } = await topicHtml("/topic?ns=shop&topic=orders&part=live", topicScript(groups, policies));
    const acme = text.slice(text.indexOf('<tr data-group="acme">'), text.indexOf('<tr data-group="big">'));
    expect(acme).toContain('action="/group/pause"');
    expect(acme).toContain('<input type="hidden" name="group" value="acme">');
    expect(acme).toContain(`<input type="hidden" name="csrf" value="${fixtureCsrf}">`);
    // The form comes back to the full page, not the live part.
    expect(acme).toContain('name="back" value="/topic?ns=shop&amp;topic=orders"');
    const big = text.slice(text.indexOf('<tr data-group="big">'));
    expect(big).toContain('action="/group/resume"');
    const nil = text.slice(text.indexOf('<tr data-group="">'), text.indexOf('<tr data-group="acme">'));
    expect(nil).not.toContain("<form");
    const readOnly = await topicHtml("/topic?ns=shop&topic=orders", topicScript(groups, policies), { readOnly: true });
    expect(readOnly.text).not.toContain('action="/group/');
  });

  test("50 rows a page, with links to the next and previous ones", async () => {
    const many = Array.from({ length: 120 }, (_, i) => group(`g${String(i).padStart(3, "0")}`, i));
    const first = await topicHtml("/topic?ns=shop&topic=orders", topicScript(many, []));
    expect(rowOrder(first.text)).toHaveLength(50);
    expect(first.text).toContain("groups 1–50 of 120");
    expect(first.text).toMatch(/groups_page=1" data-groups-page="next"/);
    const last = await topicHtml("/topic?ns=shop&topic=orders&groups_page=2", topicScript(many, []));
    expect(rowOrder(last.text)).toEqual(Array.from({ length: 20 }, (_, i) => `g${100 + i}`));
    expect(last.text).toContain("groups 101–120 of 120");
    expect(last.text).not.toContain("data-groups-page=\"next\"");
    expect(last.text).toMatch(/groups_page=1" data-groups-page="previous"/);
    const past = await topicHtml("/topic?ns=shop&topic=orders&groups_page=9", topicScript(many, []));
    expect(rowOrder(past.text)).toEqual(rowOrder(last.text));
  });

  test("the groups are read page by page up to groupsReadMax (limit-1, limit, limit+1), and the page says when it stopped", async () => {
    for (const total of [groupsReadMax - 1, groupsReadMax, groupsReadMax + 1]) {
      let calls = 0;
      const script = topicScript([], []);
      // `total` groups g0.. in pages of `limit`; `next` names the last one of a page that is not the end.
      script.groups = (fields) => {
        calls++;
        const start = fields.after === undefined ? 0 : Number(String(fields.after).slice(1)) + 1;
        const size = Math.min(Number(fields.limit), total - start);
        const page = Array.from({ length: size }, (_, i) => group(`g${start + i}`, 1));
        return start + size < total ? { groups: page, next: `g${start + size - 1}` } : { groups: page };
      };
      const { text } = await topicHtml("/topic?ns=shop&topic=orders", script);
      expect(calls).toBe(groupsReadMax / 1000);
      expect(text).toContain(`of ${Math.min(total, groupsReadMax).toLocaleString("en-US")}`);
      expect(text.includes("sorted among the first 5,000 groups by name")).toBe(total > groupsReadMax);
    }
  });

  test("a failing groups op is shown in place; the items table stays", async () => {
    const script = topicScript([], []);
    script.groups = () => ({ error: { code: "UNKNOWN_OP", message: "unknown op groups" } });
    const { text } = await topicHtml("/topic?ns=shop&topic=orders", script);
    expect(text).toContain('data-error="UNKNOWN_OP"');
    expect(text).toContain('<tr data-item="1-1">');
  });
});

describe("group pause and resume actions", () => {
  const form = (fields: Record<string, string>) => new URLSearchParams({ ns: "shop", topic: "orders", back: "/topic?ns=shop&topic=orders", ...fields });

  test("/group/pause calls pause with the group and for_ms, and comes back with the group notice", async () => {
    const { ctx, requests } = pageFixture("/group/pause", { pause: () => ({ paused_until_ms: 1 }) });
    const result = await runAction(ctx, "/group/pause", form({ group: "acme", for_ms: "300000" }));
    expect(requests.map((r) => [r.op, r.ns, r.topic, r.group, r.for_ms])).toEqual([["pause", "shop", "orders", "acme", 300000]]);
    expect(result.kind === "redirect" && result.response.headers.get("location")).toBe("/topic?ns=shop&topic=orders&done=group-pause&n=1");
  });

  test("/group/resume calls resume with the group; without a group it is refused before any op", async () => {
    const { ctx, requests } = pageFixture("/group/resume", { resume: () => ({ resumed: true }) });
    await runAction(ctx, "/group/resume", form({ group: "acme" }));
    expect(requests.map((r) => [r.op, r.group])).toEqual([["resume", "acme"]]);
    await expect(runAction(ctx, "/group/resume", form({}))).rejects.toThrow("group: required");
    await expect(runAction(ctx, "/group/pause", form({ group: "" }))).rejects.toThrow("group: required");
    expect(requests).toHaveLength(1);
  });

  test("the topic's own pause sends no group", async () => {
    const { ctx, requests } = pageFixture("/topic/pause", { pause: () => ({}) });
    await runAction(ctx, "/topic/pause", form({ group: "ignored" }));
    expect(requests[0]?.group).toBeUndefined();
  });

  test("the notices", async () => {
    const { noticeFor } = await import("../../src/dashboard/actions.ts");
    expect(noticeFor(new URLSearchParams("done=group-pause&n=1"))).toBe("Group paused.");
    expect(noticeFor(new URLSearchParams("done=group-resume&n=1"))).toBe("Group resumed.");
  });
});
