// Takes the README's dashboard screenshots (docs/images/dashboard-*.png):
// starts a real orq server, fills it with sample work (producers, a worker
// that acks and nacks, dead letters, GPU items no worker can take), lets the
// history sample it for about 45 s so the charts have lines, then saves one
// PNG per page with Debian's headless chromium. Usage:
//   node scripts/dashboard-screenshots.mjs
// (Not a test: it waits real time on purpose, for the charts.)

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { launchBrowser, OrqProcess, payloadOf, repoRoot } from "../test/dashboard/browser/support.mjs";

const outDir = join(repoRoot, "docs/images");
mkdirSync(outDir, { recursive: true });
const server = await OrqProcess.start();
process.on("uncaughtException", (error) => {
  console.error(error);
  void server.stop().then(() => process.exit(1));
});
const client = await server.connect();
const enqueue = async (ns, items) => (await client.ok("enqueue", { ns, items })).ids;

const topics = ["emails", "invoices", "render-frames", "thumbnails", "webhooks"];
for (const topic of topics) {
  await enqueue("shop", Array.from({ length: 40 }, (_, i) => ({ topic, priority: i % 3, payload: payloadOf(JSON.stringify({ order: 1000 + i, topic })), key: `${topic}-${i}` })));
}
await enqueue("shop", Array.from({ length: 12 }, (_, i) => ({ topic: "render-frames", requires: { gpu: i % 3 === 0 ? "a100" : "h100", mem_gb: { gte: 40 } }, payload: payloadOf(`{"frame": ${i}}`) })));
const [hostileId] = await enqueue("shop", [{ topic: "thumbnails", payload: payloadOf("<img src=x onerror=alert(1)>"), metadata: payloadOf('{"source": "upload"}'), key: "hostile" }]);
await enqueue("billing", Array.from({ length: 25 }, (_, i) => ({ topic: "charges", delay_ms: 3_600_000 + i, payload: payloadOf(`charge ${i}`) })));
// Dead letters with two reasons: nacked on the last attempt, and a failed dependency.
const doomed = await enqueue("shop", Array.from({ length: 6 }, (_, i) => ({ topic: "payments", max_attempts: 1, payload: payloadOf(`{"hook": ${i}, "url": "https://example.com/${i}"}`) })));
const taken = await client.ok("dequeue", { ns: "shop", topics: [{ topic: "payments", count: 6 }], capabilities: null });
await client.ok("nack", { ns: "shop", items: taken.items.filter((d) => doomed.includes(d.id)).map((d) => ({ receipt: d.receipt })) });
const [parent] = await enqueue("shop", [{ topic: "invoices" }]);
await enqueue("shop", [{ topic: "payments", after: [parent] }, { topic: "payments", after: [parent] }]);
await client.ok("cancel", { ns: "shop", ids: [parent] });
await client.ok("pause", { ns: "shop", topic: "thumbnails" });
await client.ok("dequeue", { ns: "shop", topics: [{ topic: "render-frames" }], capabilities: { gpu: "a100", mem_gb: 80 }, lease_ms: 600_000 });
await client.ok("dequeue", { ns: "shop", topics: [{ topic: "render-frames" }], capabilities: { gpu: "t4", mem_gb: 16 } });

// About 45 s of traffic: a producer and a worker, so the rate chart has lines.
const endMs = Date.now() + 45_000;
let round = 0;
while (Date.now() < endMs) {
  round++;
  await enqueue("shop", Array.from({ length: 10 + (round % 7) * 3 }, (_, i) => ({ topic: topics[i % 4], payload: payloadOf(`{"round": ${round}}`) })));
  const batch = await client.ok("dequeue", { ns: "shop", topics: topics.slice(0, 2).map((topic) => ({ topic, count: 8 })), lease_ms: 60_000 });
  const receipts = batch.items.map((d) => d.receipt);
  if (receipts.length > 2) await client.ok("nack", { ns: "shop", items: [{ receipt: receipts.pop(), delay_ms: 30_000 }] });
  if (receipts.length > 0) await client.ok("ack", { ns: "shop", receipts });
  await new Promise((done) => setTimeout(done, 500));
}

const browser = await launchBrowser();
const page = await (await browser.newContext({ viewport: { width: 1360, height: 900 }, deviceScaleFactor: 1 })).newPage();
const shot = async (name, path) => {
  await page.goto(server.url + path);
  await page.waitForFunction(() => Number(document.body.dataset.refreshes ?? "1") >= 0);
  await page.waitForTimeout(800);
  await page.screenshot({ path: join(outDir, `dashboard-${name}.png`), fullPage: false });
  console.log(`docs/images/dashboard-${name}.png`);
};
await shot("overview", "/?ns=shop");
await shot("topics", "/topics?ns=shop&sort=ready&dir=desc");
await shot("topic", "/topic?ns=shop&topic=render-frames");
await shot("item", `/item?ns=shop&id=${hostileId}`);
await shot("dead", "/dead?ns=shop&topic=payments");
await shot("matching", "/matching?ns=shop&topic=render-frames");
client.close();
await server.stop();
// The sign-in page, from a server with a token configured.
const guarded = await OrqProcess.start({ config: { auth: { tokens: [{ token: "screenshot-token", namespaces: ["*"] }] } } });
await page.goto(`${guarded.url}/`);
await page.fill('input[name="token"]', "wrong");
await page.click('button[type="submit"]');
await page.screenshot({ path: join(outDir, "dashboard-signin.png") });
console.log("docs/images/dashboard-signin.png");
await browser.close();
await guarded.stop();
