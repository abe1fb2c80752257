// Goal: the dashboard works in a real browser (Debian's headless chromium via
// playwright-core) against a real orq process with no token configured:
// every page loads without console or CSP errors and shows the counts the
// `topics` and `stats` ops report; an enqueued item appears within two
// refreshes; redrive, pause and resume work from the page; the unmatchable
// reason is shown; a hostile payload stays inert text.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { chromiumAvailable, launchBrowser, OrqProcess, payloadOf, refreshes, waitFor, watchedPage } from "./support.mjs";

const skip = chromiumAvailable() ? false : "chromium is not installed (/usr/bin/chromium)";
const hostile = "<img src=x onerror=alert(1)>";

describe("dashboard pages, no token (loopback)", { skip }, () => {
  let server;
  let client;
  let browser;
  let context;
  const ids = {};

  before(async () => {
    server = await OrqProcess.start();
    client = await server.connect();
    const enqueue = async (items) => (await client.ok("enqueue", { ns: "shop", items })).ids;
    [ids.plain, ids.second] = await enqueue([
      { topic: "orders", payload: payloadOf('{"order": 17}'), key: "order-17" },
      { topic: "orders", payload: payloadOf("plain text"), priority: -1 },
    ]);
    [ids.later] = await enqueue([{ topic: "orders", delay_ms: 3_600_000 }]);
    [ids.hostile] = await enqueue([{ topic: "mail", payload: payloadOf(hostile), metadata: payloadOf(hostile) }]);
    // A dead letter: one attempt allowed, delivered, then nacked.
    [ids.dead] = await enqueue([{ topic: "jobs", max_attempts: 1, payload: payloadOf("doomed") }]);
    const delivery = await client.ok("dequeue", { ns: "shop", topics: [{ topic: "jobs" }] });
    await client.ok("nack", { ns: "shop", items: [{ receipt: delivery.items[0].receipt }] });
    // An item no asking worker can take: requires gpu h100; kinds ask with a100 and with no gpu.
    [ids.gpu] = await enqueue([{ topic: "render", requires: { gpu: "h100" } }]);
    await client.ok("dequeue", { ns: "shop", topics: [{ topic: "render" }], capabilities: { gpu: "a100" } });
    await client.ok("dequeue", { ns: "shop", topics: [{ topic: "render" }], capabilities: { os: "linux" } });
    await enqueue([{ topic: "other-ns-check" }]).then(() => client.ok("enqueue", { ns: "billing", items: [{ topic: "invoices" }] }));
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  });

  after(async () => {
    await browser?.close();
    client?.close();
    await server?.stop();
  });

  test("every page loads without console or CSP errors", async () => {
    const { page, problems } = await watchedPage(context);
    const paths = ["/", "/topics?ns=shop", "/topic?ns=shop&topic=orders", `/item?ns=shop&id=${ids.plain}`, "/dead?ns=shop&topic=jobs", "/matching?ns=shop&topic=render", "/item?ns=shop&topic=orders&key=order-17"];
    for (const path of paths) {
      const response = await page.goto(server.url + path);
      assert.equal(response.status(), 200, path);
      // One live refresh and the charts' first fetch ran too.
      const start = await refreshes(page);
      await waitFor(`a refresh of ${path}`, async () => (await refreshes(page)) > start || !(await page.$("[data-poll]")));
    }
    assert.deepEqual(problems, []);
    await page.close();
  });

  test("the overview's counts equal the stats reply, the topics page's equal the topics reply", async () => {
    const { page } = await watchedPage(context);
    await page.goto(`${server.url}/`);
    const stats = await client.ok("stats");
    for (const state of ["ready", "delayed", "waiting", "leased", "dead"]) {
      const shown = await page.textContent(`#state-totals tfoot [data-count="${state}"]`);
      assert.equal(Number(shown.replace(/,/g, "")), stats.totals[state], state);
    }
    assert.match(await page.textContent("#state-totals"), /billing/);
    const topics = await client.ok("topics", { ns: "shop" });
    await page.goto(`${server.url}/topics?ns=shop`);
    for (const entry of topics.topics) {
      const row = page.locator(`#topics tr[data-topic="${entry.topic}"]`);
      for (const state of ["ready", "delayed", "waiting", "leased", "dead"]) {
        assert.equal(Number((await row.locator(`[data-count="${state}"]`).textContent()).replace(/,/g, "")), entry[state], `${entry.topic} ${state}`);
      }
    }
    assert.equal(await page.locator("#topics tbody tr").count(), topics.topics.length);
    await page.close();
  });

  test("the key lookup finds the item; the found item shows its JSON payload", async () => {
    const { page } = await watchedPage(context);
    await page.goto(`${server.url}/item?ns=shop`);
    await page.fill('input[name="topic"]', "orders");
    await page.fill('input[name="key"]', "order-17");
    await page.click("text=Find by key");
    assert.match(await page.textContent("#item"), new RegExp(ids.plain));
    assert.match(await page.textContent("#payload"), /"order": 17/);
    await page.close();
  });

  test("an enqueued item appears within two refreshes", async () => {
    const { page } = await watchedPage(context);
    await page.goto(`${server.url}/topic?ns=shop&topic=fresh-topic-${Date.now()}`);
    const topic = new URL(page.url()).searchParams.get("topic");
    // The first refresh after load, so the count below starts at a refresh boundary.
    const loaded = await refreshes(page);
    await waitFor("a first refresh", async () => (await refreshes(page)) > loaded);
    const before = await refreshes(page);
    const [id] = (await client.ok("enqueue", { ns: "shop", items: [{ topic }] })).ids;
    await waitFor("the new item's row", () => page.$(`#items tr[data-item="${id}"]`));
    assert.ok((await refreshes(page)) - before <= 2, "the item appeared later than two refreshes after its enqueue");
    await page.close();
  });

  test("live updates stop while the tab is hidden and resume when it is shown (fake page clock)", async () => {
    const { page, problems } = await watchedPage(context);
    // Paused before the page loads: its timers fire only when the test runs the clock.
    await page.clock.install();
    await page.clock.pauseAt(Date.now() + 1000);
    const liveRequests = [];
    page.on("request", (request) => request.url().includes("part=live") && liveRequests.push(request.url()));
    await page.goto(`${server.url}/topics?ns=shop`);
    assert.equal(await refreshes(page), 0);
    await page.clock.runFor(3000);
    await waitFor("one refresh", async () => (await refreshes(page)) === 1);
    const setHidden = (hidden) =>
      page.evaluate((value) => {
        Object.defineProperty(document, "hidden", { configurable: true, get: () => value });
        Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (value ? "hidden" : "visible") });
        document.dispatchEvent(new Event("visibilitychange"));
      }, hidden);
    await setHidden(true);
    const whileHidden = liveRequests.length;
    // Ten refresh periods of page time pass with no fetch.
    await page.clock.runFor(30_000);
    assert.equal(liveRequests.length, whileHidden);
    assert.equal(await refreshes(page), 1);
    // Shown again: one refresh at once, then the period resumes.
    await setHidden(false);
    await waitFor("the refresh on show", async () => (await refreshes(page)) === 2);
    await page.clock.runFor(3000);
    await waitFor("the next periodic refresh", async () => (await refreshes(page)) === 3);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test("redriving a dead letter from the page makes it ready", async () => {
    const { page, problems } = await watchedPage(context);
    await page.goto(`${server.url}/dead?ns=shop&topic=jobs`);
    assert.match(await page.textContent(".dead-group h2"), /nack|attempt/);
    await page.check(`input[name="id"][value="${ids.dead}"]`);
    await page.click('button[value="redrive"]');
    assert.match(await page.textContent("main"), /Redrive/);
    await page.click("#confirm");
    await page.waitForURL(/done=redrive/);
    assert.match(await page.textContent(".notice"), /Redriven: 1 dead letter/);
    const state = await client.ok("get", { ns: "shop", ids: [ids.dead] });
    assert.equal(state.items[0].state, "ready");
    assert.deepEqual(problems, []);
    await page.close();
  });

  test("cancelling all dead letters of a topic goes through a confirmation page", async () => {
    const { page, problems } = await watchedPage(context);
    const trash = (await client.ok("enqueue", { ns: "shop", items: [{ topic: "trash", max_attempts: 1 }, { topic: "trash", max_attempts: 1 }] })).ids;
    const taken = await client.ok("dequeue", { ns: "shop", topics: [{ topic: "trash", count: 2 }] });
    await client.ok("nack", { ns: "shop", items: taken.items.map((d) => ({ receipt: d.receipt })) });
    await page.goto(`${server.url}/dead?ns=shop&topic=trash`);
    await page.click('button[value="cancel-all"]');
    assert.match(await page.textContent("#confirm-form"), /Cancel all 2 dead letters of topic trash\?/);
    // Nothing changed yet.
    assert.deepEqual((await client.ok("get", { ns: "shop", ids: trash })).items.map((i) => i.state), ["dead", "dead"]);
    await page.click("#confirm");
    await page.waitForURL(/done=cancel/);
    assert.match(await page.textContent(".notice"), /Cancelled: 2 dead letters/);
    assert.deepEqual((await client.ok("get", { ns: "shop", ids: trash })).items.map((i) => i.outcome), ["cancelled", "cancelled"]);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test("pause and resume from the page", async () => {
    const { page, problems } = await watchedPage(context);
    const pausedFlag = async () => (await client.ok("topics", { ns: "shop", prefix: "orders" })).topics.find((t) => t.topic === "orders").paused;
    assert.equal(await pausedFlag(), false);
    await page.goto(`${server.url}/topics?ns=shop`);
    await page.click('#topics tr[data-topic="orders"] button[data-action="pause"]');
    await page.waitForURL(/done=pause/);
    assert.equal(await pausedFlag(), true);
    assert.equal(await page.getAttribute('#topics tr[data-topic="orders"] [data-paused]', "data-paused"), "yes");
    // A paused topic delivers nothing.
    assert.deepEqual((await client.ok("dequeue", { ns: "shop", topics: [{ topic: "orders" }] })).items, []);
    await page.click('#topics tr[data-topic="orders"] button[data-action="resume"]');
    await page.waitForURL(/done=resume/);
    assert.equal(await pausedFlag(), false);
    assert.equal(await page.getAttribute('#topics tr[data-topic="orders"] [data-paused]', "data-paused"), "no");
    // A pause with an end: the topics entry carries paused_until_ms.
    const beforeMs = Date.now();
    await page.selectOption('#topics tr[data-topic="orders"] select[name="for_ms"]', "300000");
    await page.click('#topics tr[data-topic="orders"] button[data-action="pause"]');
    await page.waitForURL(/done=pause/);
    const entry = (await client.ok("topics", { ns: "shop", prefix: "orders" })).topics.find((t) => t.topic === "orders");
    assert.equal(entry.paused, true);
    assert.ok(entry.paused_until_ms >= beforeMs + 300_000 && entry.paused_until_ms <= Date.now() + 300_000, String(entry.paused_until_ms));
    assert.match(await page.textContent('#topics tr[data-topic="orders"] [data-paused]'), /paused until/);
    await client.ok("resume", { ns: "shop", topic: "orders" });
    assert.deepEqual(problems, []);
    await page.close();
  });

  test("the unmatchable reason is shown for a topic with an unsatisfiable item", async () => {
    const { page } = await watchedPage(context);
    await page.goto(`${server.url}/matching?ns=shop&topic=render`);
    const text = await page.textContent("#unmatchable");
    assert.match(text, /\{"gpu":"h100"\}/);
    assert.match(text, /requires gpu = "h100"; has "a100"/);
    assert.match(text, /has no gpu/);
    assert.equal(await page.locator("#askers tbody tr").count(), 2);
    await page.close();
  });

  test("a payload of <img src=x onerror=alert(1)> stays inert text", async () => {
    const { page, problems } = await watchedPage(context);
    await page.goto(`${server.url}/item?ns=shop&id=${ids.hostile}`);
    assert.equal(await page.locator("#payload pre").textContent(), hostile);
    assert.equal(await page.locator("#metadata pre").textContent(), hostile);
    assert.equal(await page.locator("main img").count(), 0);
    await page.goto(`${server.url}/topic?ns=shop&topic=mail`);
    assert.match(await page.textContent("#items"), /<img src=x onerror=alert\(1\)>/);
    assert.equal(await page.locator("main img").count(), 0);
    assert.deepEqual(problems, []);
    await page.close();
  });
});
