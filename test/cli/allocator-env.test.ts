// Goal: `orq serve` runs with the allocator settings of limits.ts's
// allocatorEnv (MIMALLOC_PURGE_DELAY=0: freed pages go back to the OS at once)
// by re-executing itself, keeping its PID, arguments and any value the
// operator set. The pure parts (which variables are missing, the argv to exec)
// are checked directly; the exec itself on a real server process, through
// /proc/PID/environ (Linux, like the exec).

import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { OrqClient } from "../../src/client/index.ts";
import { allocatorEnvMarker, missingAllocatorEnv, reexecArgv } from "../../src/cli/allocator-env.ts";
import { allocatorEnv } from "../../src/limits.ts";
import { type ServerProcess, startServer } from "../support/server-process.ts";

function environOf(pid: number): Map<string, string> {
  const env = new Map<string, string>();
  for (const entry of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
    const at = entry.indexOf("=");
    if (at > 0) env.set(entry.slice(0, at), entry.slice(at + 1));
  }
  return env;
}

describe("allocator settings", () => {
  test("only the variables the environment lacks are added", () => {
    expect(missingAllocatorEnv({})).toEqual({ ...allocatorEnv });
    expect(allocatorEnv.MIMALLOC_PURGE_DELAY).toBe("0");
    expect(missingAllocatorEnv({ MIMALLOC_PURGE_DELAY: "100" })).toEqual({});
  });

  test("the exec's argv: bun keeps its flags and script, a compiled binary only its arguments", () => {
    const argv = ["/usr/bin/bun", "/repo/src/cli/main.ts", "serve", "--port", "0"];
    expect(reexecArgv("/usr/bin/bun", argv, ["--smol"], false)).toEqual(["/usr/bin/bun", "--smol", "/repo/src/cli/main.ts", "serve", "--port", "0"]);
    expect(reexecArgv("/opt/orq", ["bun", "/$bunfs/root/orq", "serve"], [], true)).toEqual(["/opt/orq", "serve"]);
  });
});

describe.skipIf(process.platform !== "linux")("orq serve re-executes itself with them", () => {
  let server: ServerProcess | null = null;
  afterEach(async () => {
    await server?.stop();
    server = null;
  });

  test("the running server has MIMALLOC_PURGE_DELAY=0 in its environment, and answers", async () => {
    server = await startServer({ env: { MIMALLOC_PURGE_DELAY: "" } });
    const env = environOf(server.pid as number);
    // An empty value counts as set: the operator's, kept.
    expect(env.get("MIMALLOC_PURGE_DELAY")).toBe("");
    await server.stop();

    server = await startServer();
    const started = environOf(server.pid as number);
    expect(started.get("MIMALLOC_PURGE_DELAY")).toBe("0");
    expect(started.get(allocatorEnvMarker)).toBe("1");
    const client = await OrqClient.connect({ port: server.port });
    expect((await client.ping()).nowMs).toBeGreaterThan(0);
    await client.close();
  });

  test("an operator's value wins", async () => {
    server = await startServer({ env: { MIMALLOC_PURGE_DELAY: "100" } });
    expect(environOf(server.pid as number).get("MIMALLOC_PURGE_DELAY")).toBe("100");
  });
});
