// Goal: the dashboard's schedules page lists a namespace's schedules (cron or
// period, time zone, next and last tick, the last item linked to its item
// page; names escaped), with a remove form per schedule and a set form, each
// carrying the CSRF token, and none for a read-only session; the set and
// remove actions call `schedule` and `unschedule` with the form's fields and
// come back to the page with a notice; a bad number is refused before any op.

import { describe, expect, test } from "bun:test";
import { runAction } from "../../src/dashboard/actions.ts";
import { schedulesPage } from "../../src/dashboard/pages/schedules.ts";
import { fixtureCsrf, pageFixture, type Script } from "./page-fixture.ts";

const schedules = [
  { name: "<b>nightly</b>", cron: "30 2 * * *", timezone: "Europe/Berlin", catch_up: "one", item: { topic: "reports" }, next_at_ms: Date.UTC(2026, 11, 2, 1, 30), last_at_ms: Date.UTC(2026, 11, 1, 1, 30), last_id: "3:17" },
  { name: "pulse", every_ms: 60000, timezone: "UTC", catch_up: "none", item: { topic: "pings" }, next_at_ms: Date.UTC(2026, 11, 1, 12, 1) },
];

const script: Script = { schedules: () => ({ schedules }) };

async function pageText(readOnly = false): Promise<string> {
  const { ctx } = pageFixture("/schedules?ns=shop", script, { readOnly });
  const page = await schedulesPage(ctx);
  return String(page.top);
}

describe("schedules page", () => {
  test("lists each schedule with its rule, zone, next and last tick, the last item linked; forms carry the CSRF token", async () => {
    const text = await pageText();
    expect(text).toContain('<tr data-schedule="&lt;b&gt;nightly&lt;/b&gt;">');
    expect(text).not.toContain("<b>nightly</b>");
    expect(text).toContain("cron <code>30 2 * * *</code>");
    expect(text).toContain("Europe/Berlin");
    expect(text).toContain('<a href="/item?ns=shop&amp;id=3%3A17" data-last-id="3:17">3:17</a>');
    expect(text).toContain("every 60,000 ms");
    expect(text).toContain(`data-next="${Date.UTC(2026, 11, 1, 12, 1)}"`);
    expect(text).toContain("not yet");
    expect(text).toContain('action="/schedule/remove"');
    expect(text).toContain('action="/schedule/set"');
    expect(text).toContain(`<input type="hidden" name="csrf" value="${fixtureCsrf}">`);
  });

  test("a read-only session sees the list and no forms", async () => {
    const text = await pageText(true);
    expect(text).toContain('data-schedule="pulse"');
    expect(text).not.toContain("<form");
  });
});

describe("schedule actions", () => {
  test("/schedule/set calls schedule with the form's fields and comes back with a notice", async () => {
    const { ctx, requests } = pageFixture("/schedule/set", { schedule: () => ({ name: "pulse", next_at_ms: 1 }) });
    const form = new URLSearchParams({ ns: "shop", name: "pulse", cron: "", every_ms: "60000", timezone: "", catch_up: "none", topic: "pings", priority: "-3", payload: "hi" });
    const result = await runAction(ctx, "/schedule/set", form);
    expect(requests.map((r) => [r.op, r.ns, r.name, r.cron, r.every_ms, r.timezone, r.catch_up])).toEqual([["schedule", "shop", "pulse", undefined, 60000, undefined, "none"]]);
    const item = requests[0]!.item as Record<string, unknown>;
    expect([item.topic, item.priority, new TextDecoder().decode(item.payload as Uint8Array)]).toEqual(["pings", -3, "hi"]);
    expect(result.kind === "redirect" && result.response.headers.get("location")).toBe("/schedules?ns=shop&done=schedule-set&n=1");
  });

  test("/schedule/remove calls unschedule; a bad number or a missing name is refused before any op", async () => {
    const { ctx, requests } = pageFixture("/schedule/remove", { unschedule: () => ({ removed: true }) });
    await runAction(ctx, "/schedule/remove", new URLSearchParams({ ns: "shop", name: "pulse" }));
    expect(requests.map((r) => [r.op, r.name])).toEqual([["unschedule", "pulse"]]);
    await expect(runAction(ctx, "/schedule/remove", new URLSearchParams({ ns: "shop" }))).rejects.toThrow("name: required");
    await expect(runAction(ctx, "/schedule/set", new URLSearchParams({ ns: "shop", name: "x", topic: "t", every_ms: "1e3" }))).rejects.toThrow("every_ms: must be a whole number");
    expect(requests).toHaveLength(1);
  });
});
