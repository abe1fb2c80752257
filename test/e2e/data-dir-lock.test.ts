// Goal: two servers never share a data dir (issue 14). A second `orq serve`
// on a data dir a running server holds is refused: one line on stderr naming
// the holder's PID, exit 1, and the first server keeps serving. A server
// started after the first was killed with SIGKILL is not refused (the kernel
// released the lock with the process) and finds the first one's items.

import { afterEach, describe, expect, test } from "bun:test";
import { OrqClient } from "../../src/client/index.ts";
import { bunPath, mainPath, ServerProcess } from "../support/server-process.ts";

let server: ServerProcess | null = null;

afterEach(async () => {
  await server?.cleanup();
  server = null;
});

/** Runs `orq serve` on dataDir (free ports unless given) to its exit; the exit code and stderr. */
async function serveToExit(dataDir: string, ports: { port: number; httpPort: number } = { port: 0, httpPort: 0 }): Promise<{ code: number; stderr: string; stdout: string }> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("ORQ_")) env[key] = value;
  }
  const child = Bun.spawn([bunPath, mainPath, "serve", "--data-dir", dataDir, "--port", String(ports.port), "--http-port", String(ports.httpPort)], {
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stderr, stdout };
}

describe("one server per data dir", () => {
  test("a second server on a held data dir prints one line naming the holder and exits 1; the first keeps serving", async () => {
    server = await ServerProcess.start();
    const client = await OrqClient.connect({ port: server.port });
    const ids = await client.enqueue("lock", [{ topic: "t", payload: "only once" }]);

    const second = await serveToExit(server.dataDir);
    expect(second.code).toBe(1);
    expect(second.stdout).toBe("");
    expect(second.stderr.trimEnd().split("\n")).toEqual([
      `orq: data dir ${server.dataDir} is in use by another orq server (pid ${server.pid}); stop it, or give this one another --data-dir`,
    ]);

    const deliveries = await client.dequeue("lock", { topics: [{ topic: "t" }] });
    expect(deliveries.map((delivery) => delivery.id)).toEqual(ids);
    await client.close();
  });

  test("a second server on the same data dir and the same ports (`npm start` twice) is told about the data dir, not the port", async () => {
    server = await ServerProcess.start();
    const httpPort = Number(/:(\d+)$/.exec(server.stdoutLines.find((line) => line.startsWith("orq http on")) ?? "")?.[1]);
    const second = await serveToExit(server.dataDir, { port: server.port, httpPort });
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(
      `orq: data dir ${server.dataDir} is in use by another orq server (pid ${server.pid}); stop it, or give this one another --data-dir\n`,
    );
  });

  test("a server started after a SIGKILL of the first is not refused and finds its items", async () => {
    server = await ServerProcess.start();
    const client = await OrqClient.connect({ port: server.port, reconnectDelayMs: 20 });
    const ids = await client.enqueue("lock", [{ topic: "t", payload: "survives" }]);
    const firstPid = server.pid;
    await server.restart({ signal: "SIGKILL" });
    expect(server.pid).not.toBe(firstPid);
    expect(server.running).toBe(true);
    const states = await client.get("lock", ids);
    expect(states.map((state) => state?.state)).toEqual(["ready"]);
    await client.close();
  });
});
