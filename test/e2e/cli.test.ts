// Goal: `orq serve` start-up errors: a bad flag value, a bad env value, an
// unknown config key or a bad config value each print one line naming the key
// and exit 2; flags beat env; an unusable data dir exits 1; --help exits 0.

import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bunPath, mainPath, ServerProcess } from "../support/server-process.ts";

function run(args: string[], env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "orq-cli-"));
  try {
    const result = Bun.spawnSync([bunPath, mainPath, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "", ...env }, stdout: "pipe", stderr: "pipe" });
    return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("orq serve start-up errors", () => {
  test("--help lists the flags and exits 0", () => {
    const { code, stdout } = run(["serve", "--help"]);
    expect(code).toBe(0);
    for (const flag of ["--host", "--port", "--http-port", "--ui-port", "--data-dir", "--shards", "--config", "--durability", "--log-level", "--frame-bytes-max"]) {
      expect(stdout).toContain(flag);
    }
  });

  test("bad flag and env values exit 2 with one line naming the key", () => {
    const flag = run(["serve", "--port", "70000"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr.trim().split("\n").length).toBe(1);
    expect(flag.stderr).toContain("--port");
    const env = run(["serve"], { ORQ_DURABILITY: "sometimes" });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain("ORQ_DURABILITY");
    expect(run(["serve", "--no-such-flag"]).code).toBe(2);
  });

  test("unknown config key, bad config value, missing explicit config: exit 2 naming the key", () => {
    const dir = mkdtempSync(join(tmpdir(), "orq-cfg-"));
    try {
      const unknown = join(dir, "unknown.json");
      writeFileSync(unknown, JSON.stringify({ prot: 1 }));
      const r1 = run(["serve", "--config", unknown]);
      expect(r1.code).toBe(2);
      expect(r1.stderr).toContain('"prot"');
      const bad = join(dir, "bad.json");
      writeFileSync(bad, JSON.stringify({ shards: "many" }));
      const r2 = run(["serve", "--config", bad]);
      expect(r2.code).toBe(2);
      expect(r2.stderr).toContain("shards");
      const r3 = run(["serve", "--config", join(dir, "missing.json")]);
      expect(r3.code).toBe(2);
      expect(r3.stderr).toContain("not found");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("flags beat env: --port from the flag, the rest from env", async () => {
    const server = await ServerProcess.start({ env: { ORQ_PORT: "1", ORQ_SHARDS: "3" } });
    try {
      expect(server.port).not.toBe(1);
      const { OrqClient } = await import("../../src/client/index.ts");
      const client = await OrqClient.connect({ port: server.port });
      expect(client.server!.shards).toBe(3);
      await client.close();
    } finally {
      await server.cleanup();
    }
  });

  test("a data dir that cannot be opened exits 1 with one line", () => {
    const dir = mkdtempSync(join(tmpdir(), "orq-bad-"));
    try {
      const file = join(dir, "not-a-dir");
      writeFileSync(file, "x");
      const r = run(["serve", "--port", "0", "--data-dir", join(file, "data")]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n").length).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
