// Goal: the CLI's `orq wait`, `orq ack --result` and `orq extend --metadata`,
// run as child processes against a real server: progress shows while an item
// is leased, `wait` times out with exit 3 while it is live, and once acked
// with a result, `wait` and `get` show it (text and --json) and exit 0.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bunPath, mainPath, ServerProcess } from "../support/server-process.ts";

let server: ServerProcess;
let workDir: string;

async function orq(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([bunPath, mainPath, ...args], {
    cwd: workDir,
    env: { PATH: process.env.PATH ?? "", ORQ_SERVER: `127.0.0.1:${server.port}` },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

async function orqJson(args: string[]): Promise<Record<string, any>> {
  const run = await orq([...args, "--json"]);
  if (run.code !== 0) throw new Error(`orq ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), "orq-cli-wait-"));
  server = await ServerProcess.start();
});

afterAll(async () => {
  await server?.cleanup();
  rmSync(workDir, { recursive: true, force: true });
});

describe("orq wait, ack --result, extend --metadata", () => {
  test("progress while leased, a wait that times out (exit 3), then the result once acked (exit 0)", async () => {
    const { id } = await orqJson(["enqueue", "--ns", "cw", "--topic", "jobs", "--payload", "p"]);
    const leased = await orqJson(["dequeue", "--ns", "cw", "--topic", "jobs"]);
    const receipt = leased.items[0].receipt as string;
    expect((await orq(["extend", "--ns", "cw", receipt, "--lease-ms", "60000", "--metadata", "step 2 of 3"])).stdout.trim()).toBe("extended 1");

    const live = await orq(["wait", "--ns", "cw", id, "--wait-ms", "0"]);
    expect(live.code).toBe(3);
    expect(live.stdout).toMatch(/state\s+leased/);
    expect(live.stdout).toContain('"step 2 of 3"');

    expect((await orq(["ack", "--ns", "cw", receipt, "--result", "done: 42"])).stdout.trim()).toBe("acked 1");
    const ended = await orq(["wait", "--ns", "cw", id, "--wait-ms", "1000"]);
    expect(ended.code).toBe(0);
    expect(ended.stdout).toMatch(/state\s+ended \(acked\)/);
    expect(ended.stdout).toContain('"done: 42"');
    expect(await orqJson(["wait", "--ns", "cw", id])).toEqual({ items: [{ id, state: "ended", outcome: "acked", result: "done: 42" }] });
    expect(await orqJson(["get", "--ns", "cw", id])).toEqual({ items: [{ id, state: "ended", outcome: "acked", result: "done: 42" }] });
    expect((await orq(["get", "--ns", "cw", id])).stdout).toMatch(/result\s+"done: 42"/);

    const missing = await orq(["wait", "--ns", "cw", "0:999999", "--wait-ms", "0"]);
    expect(missing.code).toBe(3);
    expect(missing.stdout).toContain("not found");
  });
});
