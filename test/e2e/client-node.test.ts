// Goal: the TypeScript client runs under Node as well as Bun (it uses only
// node:net): bundle src/client for Node, run a small script with `node`
// against a real server. Skips when no `node` is on PATH.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ServerProcess } from "../support/server-process.ts";

const nodePath = Bun.which("node");
let server: ServerProcess | null = null;
const dir = mkdtempSync(join(tmpdir(), "orq-node-client-"));

beforeAll(async () => {
  if (nodePath !== null) server = await ServerProcess.start();
});

afterAll(async () => {
  await server?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

test.skipIf(nodePath === null)("the client bundled for Node connects, enqueues, dequeues and acks", async () => {
  const built = await Bun.build({
    entrypoints: [resolve(import.meta.dir, "../../src/client/index.ts")],
    target: "node",
    format: "esm",
    outdir: dir,
    naming: "orq-client.mjs",
  });
  expect(built.success).toBe(true);
  const script = join(dir, "main.mjs");
  writeFileSync(
    script,
    `import { OrqClient } from "./orq-client.mjs";
const c = await OrqClient.connect({ port: Number(process.argv[2]) });
await c.enqueue("node", [{ topic: "t", payload: "from node" }]);
const [d] = await c.dequeue("node", { topics: [{ topic: "t" }] });
const acked = await c.ack("node", [d.receipt]);
console.log(JSON.stringify({ payload: new TextDecoder().decode(d.payload), acked: acked.acked }));
await c.close();
`,
  );
  const run = Bun.spawnSync([nodePath!, script, String(server!.port)], { stdout: "pipe", stderr: "pipe" });
  expect(run.stderr.toString()).toBe("");
  expect(JSON.parse(run.stdout.toString())).toEqual({ payload: "from node", acked: 1 });
});
