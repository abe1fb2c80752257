// Goal: the item page shows the `explain` reasons readably: every reason of
// the contract by name with its details (until times as UTC dates with the
// time left, `after` ids as links, the `behind` count with its 1,000 cap,
// `no_worker`'s failed constraints per kind), an unknown reason with its
// details as JSON, the empty list in words; hostile text stays text; a
// failing `explain` is shown in place and the item still is.

import { describe, expect, test } from "bun:test";
import { explainEntryFrom } from "../../src/dashboard/explain-reply.ts";
import { explainList } from "../../src/dashboard/pages/explain.ts";
import { itemPage } from "../../src/dashboard/pages/item.ts";
import { pageFixture, type Fields, type Script } from "./page-fixture.ts";

const nowMs = Date.UTC(2026, 11, 1, 12, 0, 0);
const hostile = `<img src=x onerror=alert(1)>`;

/** The list rendered for one item in `state` with `reasons`, its group `group`. */
function rendered(reasons: Fields[], state = "ready", group: string | null = "acme"): string {
  const { ctx } = pageFixture("/item?ns=shop&id=1-1", {}, { nowMs });
  const entry = explainEntryFrom({ items: [{ id: "1-1", state, reasons }] });
  if (entry === null) throw new Error("no entry");
  return explainList(ctx, entry, group).text;
}

describe("explain reasons in words", () => {
  test("instants as UTC dates with the time left", () => {
    const text = rendered([{ reason: "delayed", until_ms: nowMs + 300_000 }], "delayed");
    expect(text).toContain('<li data-reason="delayed"><code>delayed</code>: not deliverable before <time datetime="2026-12-01T12:05:00.000Z">2026-12-01 12:05:00Z</time>');
    expect(text).toContain("(in 5 min)");
    expect(rendered([{ reason: "leased", until_ms: nowMs - 1 }], "leased")).toContain("the lease ends <time");
    expect(rendered([{ reason: "leased", until_ms: nowMs - 1 }], "leased")).toContain("(now)");
    expect(rendered([{ reason: "held_for_preferred", until_ms: nowMs + 2000 }])).toContain("(in 2 s)");
  });

  test("waiting: each dependency links to its item page", () => {
    const text = rendered([{ reason: "waiting", after: ["3-7", "0-12"] }], "waiting");
    expect(text).toContain('<a href="/item?ns=shop&amp;id=3-7">3-7</a>, <a href="/item?ns=shop&amp;id=0-12">0-12</a>');
  });

  test("pauses name the group and their end, or say until resumed", () => {
    expect(rendered([{ reason: "group_paused" }])).toContain("its group <b>acme</b> is paused until resumed");
    expect(rendered([{ reason: "group_paused", until_ms: nowMs + 60_000 }])).toMatch(/its group <b>acme<\/b> is paused until <time datetime="2026-12-01T12:01:00.000Z">/);
    expect(rendered([{ reason: "topic_paused" }])).toContain("the topic is paused until resumed");
    expect(rendered([{ reason: "group_paused" }], "ready", null)).toContain('its group <span class="muted">nil</span> is paused');
  });

  test("bounds: leased of max, and the next token's time", () => {
    expect(rendered([{ reason: "group_max_leased", leased: 3, max: 3 }])).toContain("its group <b>acme</b> is at its concurrency bound: 3 leased, at most 3");
    expect(rendered([{ reason: "topic_max_leased", leased: 1200, max: 1200 }])).toContain("the topic is at its concurrency bound: 1,200 leased, at most 1,200");
    expect(rendered([{ reason: "topic_rate", next_at_ms: nowMs + 1000 }])).toContain("the topic's rate is used up; the next token comes at <time");
    expect(rendered([{ reason: "group_rate", next_at_ms: nowMs + 1000 }])).toContain("its group <b>acme</b>'s rate is used up");
  });

  test("no_worker lists each kind's failed constraints; no_dequeue and dead in words", () => {
    const text = rendered([{ reason: "no_worker", kinds: [{ failed: ["gpu: {gte: 2}", "os: linux"] }, { failed: ["gpu: {gte: 2}"] }] }]);
    expect(text).toContain('<ol class="kinds"><li>fails <code>gpu: {gte: 2}</code>; <code>os: linux</code></li><li>fails <code>gpu: {gte: 2}</code></li></ol>');
    expect(rendered([{ reason: "no_dequeue" }])).toContain("no worker asked for this topic recently");
    expect(rendered([{ reason: "dead", dead_reason: "nacked at attempt 3 of 3" }], "dead")).toContain("a dead letter: nacked at attempt 3 of 3");
  });

  test("behind: the count, and at the 1,000 cap 'or more' (limit-1, limit)", () => {
    expect(rendered([{ reason: "behind", ahead: 1 }])).toContain("<b>1</b> item goes first");
    expect(rendered([{ reason: "behind", ahead: 999 }])).toContain("<b>999</b> items go first");
    expect(rendered([{ reason: "behind", ahead: 1000 }])).toContain("<b>1,000 or more</b> items go first");
  });

  test("an unknown reason shows its details as JSON; the empty list in words", () => {
    expect(rendered([{ reason: "quota", used: 5 }])).toContain('<li data-reason="quota"><code>quota</code>: <code>{&quot;used&quot;:5}</code></li>');
    expect(rendered([], "ready")).toContain("nothing holds it back");
    expect(rendered([], "leased")).toContain("no reason given");
  });

  test("hostile text in reasons and names stays text", () => {
    const text = rendered([{ reason: hostile }, { reason: "dead", dead_reason: hostile }, { reason: "waiting", after: [hostile] }, { reason: "group_paused" }], "dead", hostile);
    expect(text).not.toContain("<img");
    expect(text).toContain("&lt;img src=x onerror=alert(1)&gt;");
  });

  test("a null entry (an item the server no longer holds) reads as null", () => {
    expect(explainEntryFrom({ items: [null] })).toBeNull();
    expect(explainEntryFrom({})).toBeNull();
  });
});

describe("the item page", () => {
  const item = { id: "1-1", topic: "orders", state: "ready", priority: 0, attempt: 0, enqueued_at_ms: nowMs, deliver_at_ms: nowMs, group: "acme", payload: new Uint8Array(0), metadata: new Uint8Array(0) };

  async function page(script: Script): Promise<{ text: string; requests: Fields[] }> {
    const fixture = pageFixture("/item?ns=shop&id=1-1", script, { nowMs });
    return { text: String((await itemPage(fixture.ctx)).live), requests: fixture.requests };
  }

  test("shows the group and the explain reasons of the item, asked by its id", async () => {
    const { text, requests } = await page({ get: () => ({ items: [item] }), explain: () => ({ items: [{ id: "1-1", state: "ready", reasons: [{ reason: "group_paused" }] }] }) });
    expect(text).toContain("<dt>group</dt><dd>acme</dd>");
    expect(text).toContain('<dd id="explain"><ul class="reasons" data-reasons="1"><li data-reason="group_paused">');
    expect(requests.find((r) => r.op === "explain")).toMatchObject({ ns: "shop", ids: ["1-1"] });
  });

  test("a failing explain is shown in place; the item is still shown", async () => {
    const { text } = await page({ get: () => ({ items: [item] }), explain: () => ({ error: { code: "UNKNOWN_OP", message: "unknown op explain" } }) });
    expect(text).toContain('data-error="UNKNOWN_OP"');
    expect(text).toContain('<dd data-state="ready">ready</dd>');
  });

  test("an ended item asks no explain", async () => {
    const { requests } = await page({ get: () => ({ items: [{ id: "1-1", state: "ended", outcome: "acked" }] }) });
    expect(requests.map((r) => r.op)).toEqual(["get"]);
  });
});
