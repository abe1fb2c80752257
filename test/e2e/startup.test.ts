// Goal: what `orq serve` says at start-up (issue 14). A port in use is named
// with the flag to change, exit 1, and the data dir is not created; recovery
// logs a start line with the items to load and a last line with the count and
// its duration; the HTTP port's index links the probes and metrics.

import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OrqClient } from "../../src/client/index.ts";
import { bunPath, mainPath, ServerProcess } from "../support/server-process.ts";

let server: ServerProcess | null = null;
let workDir = "";

afterEach(async () => {
  await server?.cleanup();
  server = null;
  if (workDir !== "") rmSync(workDir, { recursive: true, force: true });
  workDir = "";
});

async function serveToExit(args: string[]): Promise<{ code: number; stderr: string }> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("ORQ_")) env[key] = value;
  const child = Bun.spawn([bunPath, mainPath, "serve", "--host", "127.0.0.1", ...args], { cwd: workDir, env, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  return { code, stderr };
}

function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("orq serve start-up", () => {
  for (const flag of ["--port", "--http-port"] as const) {
    test(`${flag} in use: one line naming the address and the flag, exit 1, no data dir created`, async () => {
      workDir = mkdtempSync(join(tmpdir(), "orq-startup-"));
      const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data: () => {} } });
      try {
        const dataDir = join(workDir, "data");
        const other = flag === "--port" ? "--http-port" : "--port";
        const { code, stderr } = await serveToExit(["--data-dir", dataDir, flag, String(taken.port), other, "0"]);
        expect(code).toBe(1);
        const where = `127.0.0.1:${taken.port}${flag === "--http-port" ? " (http)" : ""}`;
        expect(stderr).toBe(`orq: cannot listen on ${where}: address in use; choose another ${flag}\n`);
        expect(existsSync(dataDir)).toBe(false);
      } finally {
        taken.stop(true);
      }
    });
  }

  test("recovery logs the items to load at its start and the count and duration at its end", async () => {
    server = await ServerProcess.start();
    const client = await OrqClient.connect({ port: server.port, reconnectDelayMs: 20 });
    await client.enqueue("boot", [{ topic: "t" }, { topic: "t" }, { topic: "u" }]);
    const firstRun = jsonLines(server.logs());
    expect(firstRun.find((line) => line.msg === "recovery started")).toMatchObject({ items: 0, outcomes: 0 });
    await server.restart();
    // The restarted server's log lines reach the file on their own schedule: wait (bounded) for its second recovery.
    let logs = jsonLines(server.logs());
    for (let attempt = 0; attempt < 100 && logs.filter((line) => line.msg === "recovered").length < 2; attempt++) {
      await Bun.sleep(50);
      logs = jsonLines(server.logs());
    }
    const started = logs.filter((line) => line.msg === "recovery started");
    const recovered = logs.filter((line) => line.msg === "recovered");
    expect(recovered.length).toBe(2);
    expect(started.at(-1)).toMatchObject({ items: 3, outcomes: 0 });
    expect(recovered.at(-1)).toMatchObject({ items: 3, outcomes: 0 });
    expect(typeof recovered.at(-1)?.duration_ms).toBe("number");
    await client.close();
  });
});
