// Goal: the dashboard's security model holds in a real browser and against
// forged requests: with tokens configured a person must sign in; the session
// cookie is HttpOnly, SameSite=Strict and expires; a read-only token sees the
// pages but every change is refused by the op path (FORBIDDEN); a scoped
// token sees only its namespaces; a POST without the CSRF token, or from
// another origin, is refused; sign-ins are rate-limited; and with no token
// configured, a request naming a non-loopback Host (DNS rebinding) is refused.

import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import { chromiumAvailable, launchBrowser, OrqProcess, waitFor, watchedPage } from "./support.mjs";

const skip = chromiumAvailable() ? false : "chromium is not installed (/usr/bin/chromium)";

const config = {
  auth: {
    tokens: [
      { token: "admin-token", namespaces: ["*"] },
      { token: "reader-token", namespaces: ["*"], role: "read" },
      { token: "shop-token", namespaces: ["shop"] },
    ],
  },
};

async function signIn(context, url, token) {
  const { page, problems } = await watchedPage(context);
  await page.goto(`${url}/`);
  assert.match(page.url(), /\/signin$/);
  await page.fill('input[name="token"]', token);
  await page.click('button[type="submit"]');
  await page.waitForURL(`${url}/`);
  return { page, problems };
}

/** A raw HTTP request (node:http lets a test set Host and Origin as an attacker would). */
function rawRequest(url, { method = "GET", headers = {}, body = "" } = {}) {
  return new Promise((done, fail) => {
    const request = http.request(url, { method, headers: { ...headers, "content-length": Buffer.byteLength(body) } }, (response) => {
      let text = "";
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () => done({ status: response.statusCode, headers: response.headers, text }));
    });
    request.on("error", fail);
    request.end(body);
  });
}

describe("dashboard security, tokens configured", { skip }, () => {
  let server;
  let client;
  let browser;

  before(async () => {
    server = await OrqProcess.start({ config });
    client = await server.connect("admin-token");
    await client.ok("enqueue", { ns: "shop", items: [{ topic: "orders" }] });
    await client.ok("enqueue", { ns: "billing", items: [{ topic: "invoices" }] });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    client?.close();
    await server?.stop();
  });

  test("a wrong token is refused; the right one gets an HttpOnly, SameSite=Strict cookie that expires", async () => {
    const context = await browser.newContext();
    const { page } = await watchedPage(context);
    await page.goto(`${server.url}/topics?ns=shop`);
    assert.match(page.url(), /\/signin$/);
    await page.fill('input[name="token"]', "not-a-token");
    await page.click('button[type="submit"]');
    assert.match(await page.textContent(".error"), /not valid/);
    assert.deepEqual(await context.cookies(), []);
    await page.close();
    const signedIn = await signIn(context, server.url, "admin-token");
    const [cookie] = await context.cookies();
    assert.equal(cookie.name, "orq_session");
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, "Strict");
    assert.ok(cookie.expires > Date.now() / 1000 && cookie.expires < Date.now() / 1000 + 24 * 3600, "the cookie must expire within a day");
    // Scripts cannot read it.
    assert.equal(await signedIn.page.evaluate(() => document.cookie), "");
    assert.match(await signedIn.page.textContent("#state-totals"), /shop/);
    assert.deepEqual(signedIn.problems, []);
    await context.close();
  });

  test("a read-only token sees the pages and is refused every change by the op path", async () => {
    const context = await browser.newContext();
    const { page, problems } = await signIn(context, server.url, "reader-token");
    await page.goto(`${server.url}/topics?ns=shop`);
    assert.equal(await page.locator('#topics tr[data-topic="orders"]').count(), 1);
    assert.equal(await page.locator("button[data-action]").count(), 0, "no pause buttons for a read-only token");
    assert.deepEqual(problems, []);
    // A forged change with a valid CSRF token from the page: the dispatcher refuses it.
    const csrf = await page.getAttribute('input[name="csrf"]', "value");
    const status = await page.evaluate(async (token) => {
      const response = await fetch("/topic/pause", { method: "POST", body: new URLSearchParams({ csrf: token, ns: "shop", topic: "orders" }) });
      return { status: response.status, text: await response.text() };
    }, csrf);
    assert.equal(status.status, 403);
    assert.match(status.text, /FORBIDDEN: this token is read-only/);
    const topics = await client.ok("topics", { ns: "shop" });
    assert.equal(topics.topics[0].paused, false);
    // The same role over TCP: the dispatcher is the one code path.
    const reader = await server.connect("reader-token");
    const refused = await reader.call("enqueue", { ns: "shop", items: [{ topic: "orders" }] });
    assert.equal(refused.error.code, "FORBIDDEN");
    assert.equal((await reader.call("topics", { ns: "shop" })).ok, true);
    reader.close();
    await context.close();
  });

  test("a scoped token sees only its namespaces", async () => {
    const context = await browser.newContext();
    const { page } = await signIn(context, server.url, "shop-token");
    assert.doesNotMatch(await page.textContent("#state-totals"), /billing/);
    assert.equal((await page.goto(`${server.url}/?ns=billing`)).status(), 403);
    const response = await page.goto(`${server.url}/topics?ns=billing`);
    assert.equal(response.status(), 403);
    assert.match(await page.textContent(".error"), /FORBIDDEN/);
    const matching = await page.goto(`${server.url}/matching?ns=billing&topic=invoices`);
    assert.equal(matching.status(), 403);
    const chart = await page.evaluate(async () => (await fetch("/api/history?ns=billing&kind=rates")).status);
    assert.equal(chart, 403);
    await context.close();
  });

  test("changes without the CSRF token or from another origin are refused", async () => {
    const context = await browser.newContext();
    const { page } = await signIn(context, server.url, "admin-token");
    await page.goto(`${server.url}/topics?ns=shop`);
    const csrf = await page.getAttribute('input[name="csrf"]', "value");
    const post = (body) =>
      page.evaluate(async (fields) => (await fetch("/topic/pause", { method: "POST", body: new URLSearchParams(fields) })).status, body);
    assert.equal(await post({ ns: "shop", topic: "orders" }), 403, "no CSRF token");
    assert.equal(await post({ csrf: "x".repeat(csrf.length), ns: "shop", topic: "orders" }), 403, "a wrong CSRF token");
    const [cookie] = await context.cookies();
    const host = new URL(server.url).host;
    const body = new URLSearchParams({ csrf, ns: "shop", topic: "orders" }).toString();
    const headers = { cookie: `${cookie.name}=${cookie.value}`, host, "content-type": "application/x-www-form-urlencoded" };
    const foreign = await rawRequest(`${server.url}/topic/pause`, { method: "POST", headers: { ...headers, origin: "http://evil.example" }, body });
    assert.equal(foreign.status, 403);
    const noOrigin = await rawRequest(`${server.url}/topic/pause`, { method: "POST", headers, body });
    assert.equal(noOrigin.status, 403);
    assert.equal((await client.ok("topics", { ns: "shop" })).topics[0].paused, false);
    // The same request from the right origin works: the refusals above were the checks, not a broken form.
    const same = await rawRequest(`${server.url}/topic/resume`, { method: "POST", headers: { ...headers, origin: `http://${host}` }, body });
    assert.equal(same.status, 303);
    await context.close();
  });

  test("signing out ends the session on the server", async () => {
    const context = await browser.newContext();
    const { page } = await signIn(context, server.url, "admin-token");
    const [cookie] = await context.cookies();
    await page.click("text=Sign out");
    await page.waitForURL(/\/signin$/);
    const reuse = await rawRequest(`${server.url}/topics?ns=shop`, { headers: { cookie: `${cookie.name}=${cookie.value}` } });
    assert.equal(reuse.status, 303);
    assert.equal(reuse.headers.location, "/signin");
    await context.close();
  });

  test("sign-ins are rate-limited per client address", async () => {
    const attempt = () =>
      rawRequest(`${server.url}/signin`, {
        method: "POST",
        headers: { origin: server.url, "content-type": "application/x-www-form-urlencoded" },
        body: "token=wrong",
      });
    // Earlier tests signed in from this address too; the limit is 10 a minute.
    const statuses = [];
    for (let i = 0; i < 11; i++) statuses.push((await attempt()).status);
    assert.ok(statuses.includes(429), `no 429 in ${statuses}`);
    assert.ok(statuses.indexOf(429) <= 10);
    const limited = await attempt();
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers["retry-after"]) > 0);
  });
});

describe("dashboard security, no token configured", { skip }, () => {
  let server;
  before(async () => {
    server = await OrqProcess.start();
  });
  after(async () => {
    await server?.stop();
  });

  test("loopback Host names are served; any other Host (DNS rebinding) is refused", async () => {
    const port = new URL(server.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const response = await rawRequest(`${server.url}/`, { headers: { host } });
      assert.equal(response.status, 200, host);
      assert.match(response.headers["content-security-policy"], /script-src 'self'/);
      assert.doesNotMatch(response.headers["content-security-policy"], /unsafe-inline/);
    }
    for (const host of [`evil.example:${port}`, "attacker.test", `10.0.0.1:${port}`]) {
      const response = await rawRequest(`${server.url}/`, { headers: { host } });
      assert.equal(response.status, 403, host);
      const asset = await rawRequest(`${server.url}/assets/app.js`, { headers: { host } });
      assert.equal(asset.status, 403, `${host} asset`);
    }
  });

  test("the HTTP side port's index links the dashboard", async () => {
    const index = await waitFor("the index", async () => rawRequest(`${server.httpUrl}/`));
    assert.equal(index.status, 200);
    assert.ok(index.text.includes(`href="${server.url}/"`), index.text);
  });
});
