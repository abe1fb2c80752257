// Goal: `orq serve --store memory` is the whole server in memory: items flow
// as usual, hello and stats say every namespace is in memory, a given data dir
// is left untouched (one warning line), a restart starts empty. A namespace
// configured `"durability": "memory"` on LMDB is emptied by a restart while a
// durable one keeps its items. Cluster
// settings with it, or an in-memory namespace with a postgres:// store, are
// one line and exit 2.

import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OrqClient } from "../../src/client/index.ts";
import { bunPath, mainPath, ServerProcess } from "../support/server-process.ts";

function run(args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), "orq-mem-cli-"));
  try {
    const result = Bun.spawnSync([bunPath, mainPath, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "" }, stdout: "pipe", stderr: "pipe" });
    return { code: result.exitCode, stderr: result.stderr.toString(), dirEntries: [...new Bun.Glob("*").scanSync(dir)] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("in memory: orq serve --store memory and namespaces of durability memory", () => {
  let server: ServerProcess | null = null;
  afterEach(async () => {
    await server?.cleanup();
    server = null;
  });

  test("serves items from memory, says so in hello and stats, leaves the data dir untouched, and starts empty after a restart", async () => {
    server = await ServerProcess.start({ args: ["--store", "memory"] });
    expect(existsSync(server.dataDir)).toBe(false);
    expect(server.stderrLines.filter((line) => line.includes("left untouched"))).toEqual([
      `orq: warning: --store memory writes nothing to disk: data dir ${server.dataDir} is left untouched`,
    ]);
    let client = await OrqClient.connect({ port: server.port, reconnectDelayMs: 20 });
    expect(client.server?.memoryNamespaces).toEqual(["*"]);
    const [first, second] = await client.enqueue("jobs", [{ topic: "t", payload: new Uint8Array([1]) }, { topic: "t" }]);
    const deliveries = await client.dequeue("jobs", { topics: [{ topic: "t", count: 1 }], waitMs: 0 });
    expect(deliveries.map((d) => d.id)).toEqual([first!]);
    expect((await client.ack("jobs", [deliveries[0]!.receipt])).acked).toBe(1);
    const stats = (await client.stats("jobs")) as { namespaces: Record<string, { ready: number; durability?: string }> };
    expect(stats.namespaces.jobs).toMatchObject({ ready: 1, durability: "memory" });
    const before = await client.get("jobs", [second!]);
    expect(before[0]).toMatchObject({ id: second, state: "ready" });
    await client.close();

    await server.restart();
    expect(existsSync(server.dataDir)).toBe(false);
    client = await OrqClient.connect({ port: server.port, reconnectDelayMs: 20 });
    const after = (await client.stats()) as { totals: { ready: number }; namespaces: Record<string, unknown> };
    expect(after.totals.ready).toBe(0);
    expect(after.namespaces.jobs).toBeUndefined();
    await client.close();
  });

  test("a namespace of durability memory on LMDB: hello and stats name it, and a restart empties it while a durable one keeps its items", async () => {
    server = await ServerProcess.start({ config: { namespaces: { scratch: { durability: "memory" }, kept: {} } } });
    let client = await OrqClient.connect({ port: server.port, reconnectDelayMs: 20 });
    expect(client.server?.memoryNamespaces).toEqual(["scratch"]);
    const scratchIds = await client.enqueue("scratch", [{ topic: "t", payload: new Uint8Array([5]) }, { topic: "t" }]);
    const keptIds = await client.enqueue("kept", [{ topic: "t", payload: new Uint8Array([6]) }]);
    const delivered = await client.dequeue("scratch", { topics: [{ topic: "t", count: 1 }], waitMs: 0 });
    expect(delivered.map((d) => [...d.payload])).toEqual([[5]]);
    const stats = (await client.stats()) as { namespaces: Record<string, { durability?: string }> };
    expect(stats.namespaces.scratch?.durability).toBe("memory");
    expect(stats.namespaces.kept?.durability).toBeUndefined();
    await client.close();

    await server.restart({ signal: "SIGKILL" });
    client = await OrqClient.connect({ port: server.port, reconnectDelayMs: 20 });
    expect(await client.get("scratch", scratchIds)).toEqual([null, null]);
    expect((await client.get("kept", keptIds))[0]).toMatchObject({ id: keptIds[0], state: "ready" });
    const after = (await client.stats()) as { namespaces: Record<string, unknown> };
    expect(after.namespaces.scratch).toBeUndefined();
    await client.close();
  });

  test("a server on disk says no namespace is in memory", async () => {
    server = await ServerProcess.start();
    const client = await OrqClient.connect({ port: server.port });
    expect(client.server?.memoryNamespaces).toBeUndefined();
    await client.enqueue("jobs", [{ topic: "t" }]);
    const stats = (await client.stats("jobs")) as { namespaces: Record<string, { durability?: string }> };
    expect(stats.namespaces.jobs?.durability).toBeUndefined();
    await client.close();
  });

  test("cluster settings with --store memory are one line and exit 2, before anything opens", () => {
    for (const args of [["--node-id", "a"], ["--advertise", "127.0.0.1:1"], ["--shard-lease-ms", "5000"]]) {
      const result = run(["serve", "--store", "memory", "--port", "0", "--http-port", "0", "--ui-port", "off", ...args]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toContain(args[0]!);
      expect(result.dirEntries).toEqual([]);
    }
  });

  test("an in-memory namespace with a postgres:// store is one line and exit 2", () => {
    const dir = mkdtempSync(join(tmpdir(), "orq-mem-cfg-"));
    try {
      const config = join(dir, "orq.json");
      writeFileSync(config, JSON.stringify({ namespaces: { scratch: { durability: "memory" } } }));
      const result = run(["serve", "--config", config, "--store", "postgres://orq@127.0.0.1:1/orq", "--port", "0"]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toContain("namespaces.scratch.durability");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
