// Goal: the standalone binary (dist/orq, built by `npm run build`) runs from an
// empty directory with no Bun, Node or node_modules on PATH or nearby: it
// serves the protocol, keeps unacked items across a restart, exits 0 on
// SIGTERM, serves the web dashboard and its embedded assets, and fails with a clear message and exit 1 when its native addon
// cannot be loaded. Skipped when dist/orq is absent unless ORQ_REQUIRE_BINARY=1
// (the CI smoke job sets it so a missing binary fails instead of skipping).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runToExit, startServerProcess, type ServerProcess } from "./server-process.ts";
import { WireProbe } from "./wire-probe.ts";

const builtBinary = path.resolve(import.meta.dir, "../../dist/orq");
const haveBinary = existsSync(builtBinary);
if (!haveBinary) {
  if (process.env.ORQ_REQUIRE_BINARY === "1") throw new Error(`${builtBinary} is missing: run \`npm run build\` first`);
  console.warn(`skipping binary tests: ${builtBinary} not built (run \`npm run build\`)`);
}

let workDir = "";
let binary = "";
// Only the system's own tools: proves the binary needs no bun or node.
let bareEnv: Record<string, string> = {};

beforeAll(() => {
  if (!haveBinary) return;
  workDir = mkdtempSync(path.join(tmpdir(), "orq-binary-"));
  binary = path.join(workDir, "orq");
  copyFileSync(builtBinary, binary);
  bareEnv = { PATH: "/usr/bin:/bin", TMPDIR: workDir };
});

afterAll(() => {
  if (workDir !== "") rmSync(workDir, { recursive: true, force: true });
});

function serve(): Promise<ServerProcess> {
  const command = [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--http-port", "0", "--ui-port", "0", "--data-dir", path.join(workDir, "data")];
  return startServerProcess(command, { cwd: workDir, env: bareEnv });
}

describe.skipIf(!haveBinary)("dist/orq", () => {
  test("serves enqueue, dequeue and ack, keeps unacked items across a restart, exits 0 on SIGTERM", async () => {
    let server = await serve();
    try {
      let probe = await WireProbe.connect(server.host, server.port);
      const hello = await probe.request("hello", { protocol: 1, client: "binary-test" });
      expect(hello).toMatchObject({ ok: true, server: "orq", protocol: 1 });

      const enqueued = await probe.request("enqueue", {
        ns: "smoke",
        items: [
          { topic: "t", payload: new TextEncoder().encode("one"), priority: 1 },
          { topic: "t", payload: new TextEncoder().encode("two"), priority: 2 },
        ],
      });
      expect(enqueued.ok).toBe(true);
      const ids = enqueued.ids as string[];
      expect(ids).toHaveLength(2);

      const taken = await probe.request("dequeue", { ns: "smoke", topics: [{ topic: "t", count: 1 }], lease_ms: 60_000 });
      const deliveries = taken.items as Array<{ id: string; receipt: string; payload: Uint8Array }>;
      expect(deliveries.map((d) => d.id)).toEqual([ids[0] as string]);
      expect(new TextDecoder().decode(deliveries[0]?.payload)).toBe("one");
      const acked = await probe.request("ack", { ns: "smoke", receipts: [deliveries[0]?.receipt] });
      expect(acked).toMatchObject({ ok: true, acked: 1, stale: [] });
      probe.close();

      expect(await server.stop()).toBe(0);

      server = await serve();
      probe = await WireProbe.connect(server.host, server.port);
      await probe.request("hello", { protocol: 1 });
      const after = await probe.request("dequeue", { ns: "smoke", topics: [{ topic: "t", count: 10 }] });
      expect((after.items as Array<{ id: string }>).map((d) => d.id)).toEqual([ids[1] as string]);
      probe.close();
      expect(await server.stop()).toBe(0);
    } catch (error) {
      console.error(`server output:\n${server.output()}`);
      await server.stop();
      throw error;
    }
  }, 60_000);

  test("serves the web dashboard and its embedded assets from an empty folder", async () => {
    const server = await serve();
    try {
      const url = /orq dashboard on (\S+)/.exec(server.output())?.[1];
      expect(url).toBeDefined();
      const page = await fetch(url as string);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
      const html = await page.text();
      expect(html).toContain("<h1>Overview</h1>");
      expect(html).toContain('src="/assets/app.js"');
      for (const [asset, marker] of [["app.js", "visibilitychange"], ["uPlot.iife.min.js", "uPlot"], ["app.css", "--accent"]] as const) {
        const response = await fetch(new URL(`/assets/${asset}`, url));
        expect(response.status).toBe(200);
        expect(await response.text()).toContain(marker);
      }
      expect(await server.stop()).toBe(0);
    } catch (error) {
      console.error(`server output:\n${server.output()}`);
      await server.stop();
      throw error;
    }
  }, 60_000);

  test("exits 1 with a clear message when the native addon cannot be extracted", async () => {
    const result = await runToExit([binary, "serve", "--port", "0", "--http-port", "0", "--ui-port", "0", "--data-dir", path.join(workDir, "data2")], {
      cwd: workDir,
      env: { PATH: "/usr/bin:/bin", TMPDIR: path.join(workDir, "no-such-dir") },
    });
    expect(result.code).toBe(1);
    expect(result.output).toContain("native addon");
    expect(result.output).toContain("TMPDIR");
  }, 30_000);
});
