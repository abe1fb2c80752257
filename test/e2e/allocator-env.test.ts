// Goal: `orq serve` runs with the allocator settings of allocatorEnv
// (src/limits/memory.ts) by re-executing itself once at start: the process
// the test spawned (same PID, same pipes) ends up with MIMALLOC_PURGE_DELAY
// at orq's value and serves requests; an operator's own value is kept and no
// re-exec happens; and the argv it re-executes with is /proc/self/cmdline's.

import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { allocatorEnvMarker, missingAllocatorEnv, parseCmdline } from "../../src/cli/allocator-env.ts";
import { allocatorEnv } from "../../src/limits.ts";
import { RawConnection } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

let server: ServerProcess | null = null;

afterEach(async () => {
  await server?.cleanup();
  server = null;
});

/** The environment of a running process, from /proc. */
function environOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").filter((entry) => entry !== "");
  return new Map(entries.map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]));
}

describe("allocator settings", () => {
  test("adds only the variables the environment lacks", () => {
    expect(allocatorEnv.MIMALLOC_PURGE_DELAY).toBe("5000");
    expect(missingAllocatorEnv({ PATH: "/bin" })).toEqual({ MIMALLOC_PURGE_DELAY: "5000" });
    expect(missingAllocatorEnv({ MIMALLOC_PURGE_DELAY: "100" })).toEqual({});
    expect(missingAllocatorEnv({}, { A: "1", B: "2" })).toEqual({ A: "1", B: "2" });
    expect(missingAllocatorEnv({ B: "" }, { A: "1", B: "2" })).toEqual({ A: "1" });
  });

  test("re-executes with /proc/self/cmdline's argv, empty arguments included", () => {
    expect(parseCmdline("bun\0src/cli/main.ts\0serve\0--data-dir\0/d\0")).toEqual(["bun", "src/cli/main.ts", "serve", "--data-dir", "/d"]);
    expect(parseCmdline("orq\0serve\0--token\0\0")).toEqual(["orq", "serve", "--token", ""]);
  });

  test.skipIf(process.platform !== "linux")("the spawned server process ends up with orq's purge delay, same PID, and serves", async () => {
    server = await ServerProcess.start();
    const pid = server.pid!;
    const environ = environOf(pid);
    // The test runner's own value, if it has one, is an operator's choice the server keeps.
    const inherited = process.env.MIMALLOC_PURGE_DELAY;
    expect(environ.get("MIMALLOC_PURGE_DELAY")).toBe(inherited ?? allocatorEnv.MIMALLOC_PURGE_DELAY);
    expect(environ.get(allocatorEnvMarker)).toBe(inherited === undefined ? "1" : undefined);
    const conn = await RawConnection.connect(server.port);
    expect(await conn.call({ id: 1, op: "ping" })).toMatchObject({ ok: true });
    conn.close();
    expect(server.pid).toBe(pid);
  });

  test.skipIf(process.platform !== "linux")("an operator's MIMALLOC_PURGE_DELAY is kept, and no re-exec happens", async () => {
    server = await ServerProcess.start({ env: { MIMALLOC_PURGE_DELAY: "100" } });
    const environ = environOf(server.pid!);
    expect(environ.get("MIMALLOC_PURGE_DELAY")).toBe("100");
    expect(environ.has(allocatorEnvMarker)).toBe(false);
  });
});
