// Goal: a topic's groups and an item's explain reasons work in a real
// browser against a real orq process (no token, loopback): items in two
// groups and policies set over TCP show on the topic page with their bounds;
// sorting by backlog puts the larger backlog first; the group's Pause button
// pauses that group alone (the `groups` op says so, `topics` does not), and
// Resume undoes it; the paused group's item page shows `group_paused`.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { chromiumAvailable, launchBrowser, OrqProcess, waitFor, watchedPage } from "./support.mjs";

const skip = chromiumAvailable() ? false : "chromium is not installed (/usr/bin/chromium)";
const ns = "fair";
const topic = "jobs";

describe("a topic's groups and an item's explain, no token (loopback)", { skip }, () => {
  let server;
  let client;
  let browser;
  let context;
  const ids = {};

  before(async () => {
    server = await OrqProcess.start();
    client = await server.connect();
    // "alpha" sorts first by name but holds the smaller backlog (1 against 3).
    [ids.alpha] = (await client.ok("enqueue", { ns, items: [{ topic, group: "alpha" }] })).ids;
    [ids.beta] = (await client.ok("enqueue", { ns, items: [{ topic, group: "beta" }, { topic, group: "beta" }, { topic, group: "beta", delay_ms: 3_600_000 }] })).ids;
    await client.ok("policy", { ns, topic, max_leased: 100 });
    await client.ok("policy", { ns, topic, group: "*", max_leased: 5 });
    await client.ok("policy", { ns, topic, group: "beta", weight: 3, rate: { count: 10, per_ms: 1000 } });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  });

  after(async () => {
    await browser?.close();
    client?.close();
    await server?.stop();
  });

  const groupEntry = async (name) => (await client.ok("groups", { ns, topic })).groups.find((g) => g.group === name);
  const rowNames = (page) => page.$$eval("#groups tbody tr[data-group]", (rows) => rows.map((row) => row.dataset.group));

  test("the groups table shows each group's counts and bounds, and the topic's own policy", async () => {
    const { page, problems } = await watchedPage(context);
    const response = await page.goto(`${server.url}/topic?ns=${ns}&topic=${topic}`);
    assert.equal(response.status(), 200);
    assert.deepEqual(await rowNames(page), ["alpha", "beta"]);
    assert.equal(await page.textContent("#topic-policy"), "at most 100 leased");
    assert.equal(await page.textContent("#default-policy"), "at most 5 leased");
    const beta = page.locator('#groups tr[data-group="beta"]');
    assert.equal(await beta.locator('[data-count="backlog"]').textContent(), "3");
    assert.equal(await beta.locator('[data-bound="weight"]').textContent(), "3");
    assert.equal(await beta.locator('[data-bound="rate"]').textContent(), "10 per 1 s");
    assert.equal(await beta.locator('[data-bound="source"]').textContent(), "own policy");
    const alpha = page.locator('#groups tr[data-group="alpha"]');
    assert.equal(await alpha.locator('[data-bound="max_leased"]').textContent(), "5");
    assert.equal(await alpha.locator('[data-bound="source"]').textContent(), "default (*)");
    assert.deepEqual(problems, []);
    await page.close();
  });

  test("sorting by backlog puts the larger backlog first, and again the smaller", async () => {
    const { page, problems } = await watchedPage(context);
    await page.goto(`${server.url}/topic?ns=${ns}&topic=${topic}`);
    await page.click('#groups th a[data-sort="backlog"]');
    await page.waitForURL(/groups_sort=backlog/);
    assert.deepEqual(await rowNames(page), ["beta", "alpha"]);
    await page.click('#groups th a[data-sort="backlog"]');
    await page.waitForURL(/groups_dir=asc/);
    assert.deepEqual(await rowNames(page), ["alpha", "beta"]);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test("a group's Pause button pauses that group alone; its item shows group_paused; Resume undoes it", async () => {
    const { page, problems } = await watchedPage(context);
    assert.equal((await groupEntry("beta")).paused, false);
    await page.goto(`${server.url}/topic?ns=${ns}&topic=${topic}&groups_sort=backlog&groups_dir=desc`);
    await page.click('#groups tr[data-group="beta"] button[data-action="pause"]');
    await page.waitForURL(/done=group-pause/);
    assert.match(await page.textContent(".notice"), /Group paused/);
    // The redirect keeps the sort.
    assert.match(page.url(), /groups_sort=backlog/);
    assert.equal((await groupEntry("beta")).paused, true);
    assert.equal((await groupEntry("alpha")).paused, false);
    const topicEntry = (await client.ok("topics", { ns, prefix: topic })).topics.find((t) => t.topic === topic);
    assert.equal(topicEntry.paused, false);
    assert.equal(await page.getAttribute('#groups tr[data-group="beta"] [data-paused]', "data-paused"), "yes");

    await page.goto(`${server.url}/item?ns=${ns}&id=${ids.beta}`);
    await waitFor("the group_paused reason", () => page.$('#explain li[data-reason="group_paused"]'));
    assert.match(await page.textContent('#explain li[data-reason="group_paused"]'), /its group beta is paused until resumed/);

    await page.goto(`${server.url}/topic?ns=${ns}&topic=${topic}`);
    await page.click('#groups tr[data-group="beta"] button[data-action="resume"]');
    await page.waitForURL(/done=group-resume/);
    assert.equal((await groupEntry("beta")).paused, false);
    assert.deepEqual(problems, []);
    await page.close();
  });

  test("an item with nothing holding it back says so", async () => {
    const { page, problems } = await watchedPage(context);
    await page.goto(`${server.url}/item?ns=${ns}&id=${ids.alpha}`);
    const explain = await page.textContent("#explain");
    assert.doesNotMatch(explain, /explain: [A-Z_]+:/, "the explain op failed");
    assert.deepEqual(problems, []);
    await page.close();
  });
});
