// Goal: every client command of the CLI (ping, enqueue, dequeue, ack, nack,
// extend, get, cancel, topics, list, pause, resume, dead, redrive, stats), run as a child process
// against a real server, does what it says in human and --json output, and
// exits 0 (ok), 1 (`error CODE: message` on stderr), 2 (bad usage) or 3
// (stale receipts / missing ids). Tokens come from --token or ORQ_TOKEN and
// never appear in any output.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import packageJson from "../../package.json" with { type: "json" };
import { bunPath, mainPath, ServerProcess } from "../support/server-process.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let server: ServerProcess;
let workDir: string;

async function orq(args: string[], options: { stdin?: Uint8Array | string; env?: Record<string, string>; server?: ServerProcess } = {}): Promise<Run> {
  const target = options.server ?? server;
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", ORQ_SERVER: `127.0.0.1:${target.port}`, ...options.env };
  const proc = Bun.spawn([bunPath, mainPath, ...args], {
    cwd: workDir,
    env,
    stdin: options.stdin === undefined ? "ignore" : new Blob([options.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

async function orqJson(args: string[], options: Parameters<typeof orq>[1] = {}): Promise<Record<string, any>> {
  const run = await orq([...args, "--json"], options);
  if (run.code !== 0) throw new Error(`orq ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), "orq-cli-cmd-"));
  server = await ServerProcess.start();
});

afterAll(async () => {
  await server?.cleanup();
  rmSync(workDir, { recursive: true, force: true });
});

describe("help and version", () => {
  test("--help lists every client command; per-command help lists its flags; --version is the package's", async () => {
    const help = await orq(["--help"]);
    expect(help.code).toBe(0);
    for (const command of ["serve", "ping", "enqueue", "dequeue", "ack", "nack", "extend", "get", "cancel", "topics", "list", "pause", "resume", "dead", "redrive", "stats"]) {
      expect(help.stdout).toContain(`  ${command} `);
    }
    const enqueueHelp = await orq(["enqueue", "--help"]);
    expect(enqueueHelp.code).toBe(0);
    for (const flag of ["--topic", "--priority", "--delay-ms", "--key", "--requires", "--prefers", "--prefer-wait-ms", "--trace", "--after", "--payload", "--payload-file", "--server", "--ns", "--token", "--json"]) {
      expect(enqueueHelp.stdout).toContain(flag);
    }
    const version = await orq(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(packageJson.version);
  });
});

describe("client commands", () => {
  test("ping: human and --json", async () => {
    const human = await orq(["ping"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`pong from orq ${packageJson.version}`);
    const json = await orqJson(["ping"]);
    expect(json.version).toBe(packageJson.version);
    expect(json.now_ms).toBeGreaterThan(0);
    expect(json.shards).toBe(16);
  });

  test("enqueue from --payload, stdin and --payload-file; get shows them in human and --json output", async () => {
    const inline = await orq(["enqueue", "--ns", "cli", "--topic", "emails", "--payload", "hello", "--priority", "-5", "--key", "k-1"]);
    expect(inline.code).toBe(0);
    const inlineId = inline.stdout.trim();
    expect(inlineId.length).toBeGreaterThan(0);
    const again = await orqJson(["enqueue", "--ns", "cli", "--topic", "emails", "--payload", "other", "--key", "k-1"]);
    expect(again.id).toBe(inlineId);

    const piped = await orqJson(["enqueue", "--ns", "cli", "--topic", "emails", "--delay-ms", "3600000"], { stdin: "from stdin" });
    const binaryPath = join(workDir, "payload.bin");
    writeFileSync(binaryPath, new Uint8Array([0xff, 0x00, 0x01]));
    const fromFile = await orqJson(["enqueue", "--ns", "cli", "--topic", "blobs", "--payload-file", binaryPath, "--requires", '{"gpu": true}']);

    const got = await orqJson(["get", "--ns", "cli", inlineId, piped.id, fromFile.id]);
    expect(got.items.length).toBe(3);
    expect(got.items[0]).toMatchObject({ id: inlineId, topic: "emails", state: "ready", priority: -5, payload: "hello", key: "k-1", attempt: 0 });
    expect(got.items[1]).toMatchObject({ state: "delayed", payload: "from stdin" });
    expect(got.items[2]).toMatchObject({ topic: "blobs", payload_base64: Buffer.from([0xff, 0, 1]).toString("base64"), requires: { gpu: true } });

    const human = await orq(["get", "--ns", "cli", inlineId]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('"hello"');
    expect(human.stdout).toMatch(/state\s+ready/);
  });

  test("enqueue --after: waiting until its dependency is acked", async () => {
    const first = await orqJson(["enqueue", "--ns", "deps", "--topic", "t", "--payload", "1"]);
    const second = await orqJson(["enqueue", "--ns", "deps", "--topic", "t", "--payload", "2", "--after", first.id]);
    const got = await orqJson(["get", "--ns", "deps", second.id]);
    expect(got.items[0]).toMatchObject({ state: "waiting", after: [first.id] });
  });

  test("enqueue --prefers, --prefer-wait-ms and --trace: get and list show them; the item is held for a worker that fits, which sees the trace", async () => {
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const prefers = '{"zone": {"in": ["eu-1"], "weight": 5}, "ssd": true}';
    const { id } = await orqJson(["enqueue", "--ns", "pf", "--topic", "render", "--payload", "x", "--prefers", prefers, "--prefer-wait-ms", "3600000", "--trace", traceparent]);
    const plain = await orqJson(["enqueue", "--ns", "pf", "--topic", "render", "--payload", "y", "--priority", "1"]);

    const got = await orqJson(["get", "--ns", "pf", id, plain.id]);
    expect(got.items[0]).toMatchObject({ id, prefers: { zone: { in: ["eu-1"], weight: 5 }, ssd: true }, prefer_wait_ms: 3_600_000, trace: traceparent });
    expect(Object.keys(got.items[1])).not.toContain("prefers");
    expect(Object.keys(got.items[1])).not.toContain("prefer_wait_ms");
    expect(Object.keys(got.items[1])).not.toContain("trace");
    const human = await orq(["get", "--ns", "pf", id]);
    expect(human.stdout).toMatch(/^prefers\s+\{"zone":\{"in":\["eu-1"\],"weight":5\},"ssd":true\}$/m);
    expect(human.stdout).toMatch(/^prefer wait\s+3600000 ms$/m);
    expect(human.stdout).toMatch(new RegExp(`^trace\\s+"${traceparent}"$`, "m"));
    expect((await orq(["get", "--ns", "pf", plain.id])).stdout).not.toMatch(/^(prefers|prefer wait|trace)\s/m);
    const listed = await orqJson(["list", "--ns", "pf", "--topic", "render"]);
    expect(listed.items[0]).toMatchObject({ id, prefer_wait_ms: 3_600_000, trace: traceparent });

    // Held for its first hour as ready: a worker that fits no entry gets the plain item behind it, and one that fits every entry gets it.
    const elsewhere = await orqJson(["dequeue", "--ns", "pf", "--topic", "render", "--capabilities", '{"zone": "us-1"}', "--count", "2"]);
    expect(elsewhere.items.map((d: { id: string }) => d.id)).toEqual([plain.id]);
    expect(Object.keys(elsewhere.items[0])).not.toContain("trace");
    const fits = await orqJson(["dequeue", "--ns", "pf", "--topic", "render", "--capabilities", '{"zone": "eu-1", "ssd": true}']);
    expect(fits.items[0]).toMatchObject({ id, trace: traceparent });
  });

  test("enqueue --prefers and --trace refused: bad JSON is usage (exit 2); a bad weight or a long trace is the server's error (exit 1)", async () => {
    const notJson = await orq(["enqueue", "--ns", "pf", "--topic", "t", "--payload", "x", "--prefers", "{nope"]);
    expect(notJson.code).toBe(2);
    const notObject = await orq(["enqueue", "--ns", "pf", "--topic", "t", "--payload", "x", "--prefers", "[1]"]);
    expect(notObject.code).toBe(2);
    const negativeWait = await orq(["enqueue", "--ns", "pf", "--topic", "t", "--payload", "x", "--prefer-wait-ms", "-1"]);
    expect(negativeWait.code).toBe(2);
    const badWeight = await orq(["enqueue", "--ns", "pf", "--topic", "t", "--payload", "x", "--prefers", '{"zone": {"in": ["eu-1"], "weight": 0}}']);
    expect(badWeight.code).toBe(1);
    expect(badWeight.stderr).toMatch(/^error BAD_REQUEST: .*items\[0\]\.prefers\.zone\.weight/);
    const longTrace = await orq(["enqueue", "--ns", "pf", "--topic", "t", "--payload", "x", "--trace", "t".repeat(513)]);
    expect(longTrace.code).toBe(1);
    expect(longTrace.stderr).toMatch(/^error TOO_LARGE: /);
    const longestTrace = await orqJson(["enqueue", "--ns", "pf", "--topic", "t", "--payload", "x", "--trace", "t".repeat(512)]);
    expect((await orqJson(["get", "--ns", "pf", longestTrace.id])).items[0].trace).toHaveLength(512);
  });

  test("dequeue, extend, ack (then stale: exit 3), nack with delay", async () => {
    await orqJson(["enqueue", "--ns", "flow", "--topic", "jobs", "--payload", "a"]);
    await orqJson(["enqueue", "--ns", "flow", "--topic", "jobs", "--payload", "b"]);
    const leased = await orqJson(["dequeue", "--ns", "flow", "--topic", "jobs", "--lease-ms", "60000"]);
    expect(leased.items.length).toBe(1);
    const first = leased.items[0];
    expect(first).toMatchObject({ topic: "jobs", payload: "a", attempt: 1 });

    const extended = await orq(["extend", "--ns", "flow", first.receipt, "--lease-ms", "120000"]);
    expect(extended.code).toBe(0);
    expect(extended.stdout.trim()).toBe("extended 1");

    const acked = await orq(["ack", "--ns", "flow", first.receipt]);
    expect(acked.code).toBe(0);
    expect(acked.stdout.trim()).toBe("acked 1");
    const stale = await orq(["ack", "--ns", "flow", first.receipt]);
    expect(stale.code).toBe(3);
    expect(stale.stdout).toContain(`stale ${first.receipt}`);
    const staleJson = await orq(["ack", "--ns", "flow", first.receipt, "--json"]);
    expect(JSON.parse(staleJson.stdout)).toEqual({ acked: 0, stale: [first.receipt] });

    const human = await orq(["dequeue", "--ns", "flow", "--topic", "jobs", "--lease-ms", "60000"]);
    expect(human.code).toBe(0);
    const receipt = /receipt\s+(\S+)/.exec(human.stdout)?.[1];
    expect(receipt).toBeDefined();
    expect(human.stdout).toContain('"b"');
    const nacked = await orqJson(["nack", "--ns", "flow", receipt!, "--delay-ms", "3600000", "--metadata", "retry later"]);
    expect(nacked).toEqual({ nacked: 1, stale: [] });

    const empty = await orq(["dequeue", "--ns", "flow", "--topic", "jobs"]);
    expect(empty.code).toBe(0);
    expect(empty.stdout).toBe("");
    expect(empty.stderr).toContain("no items");
    const emptyJson = await orqJson(["dequeue", "--ns", "flow", "--topic", "jobs"]);
    expect(emptyJson.items).toEqual([]);

    const topics = await orqJson(["topics", "--ns", "flow"]);
    expect(topics.topics).toEqual([{ topic: "jobs", ready: 0, delayed: 1, waiting: 0, leased: 0, dead: 0, paused: false }]);
    const topicsHuman = await orq(["topics", "--ns", "flow"]);
    expect(topicsHuman.stdout).toMatch(/TOPIC\s+READY\s+DELAYED\s+WAITING\s+LEASED\s+DEAD\s+PAUSED\njobs\s+0\s+1\s+0\s+0\s+0\s+-/);
  });

  test("list: a page in order, --state, --limit with the more: cursor, --after, --all; human and --json", async () => {
    const ids: string[] = [];
    for (const priority of [3, 1, 2]) ids.push((await orqJson(["enqueue", "--ns", "ls", "--topic", "t", "--payload", `p${priority}`, "--priority", String(priority)])).id);
    const delayed = (await orqJson(["enqueue", "--ns", "ls", "--topic", "t", "--payload", "later", "--delay-ms", "3600000"])).id;
    const all = await orqJson(["list", "--ns", "ls", "--topic", "t"]);
    expect(all.items.map((s: { id: string }) => s.id)).toEqual([ids[1], ids[2], ids[0], delayed]);
    expect(all.items[0]).toMatchObject({ state: "ready", priority: 1, payload: "p1" });
    expect(all.next).toBeNull();
    expect((await orqJson(["list", "--ns", "ls", "--topic", "t", "--state", "delayed"])).items.map((s: { id: string }) => s.id)).toEqual([delayed]);
    const human = await orq(["list", "--ns", "ls", "--topic", "t", "--limit", "2"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/ID\s+STATE\s+PRIORITY\s+ATTEMPT\s+DELIVER AT\s+PAYLOAD\n\S+\s+ready\s+1\s+0\s+\S+\s+"p1"/);
    const cursor = /more: --after (".*")/.exec(human.stdout)?.[1];
    expect(cursor).toBeDefined();
    const rest = await orqJson(["list", "--ns", "ls", "--topic", "t", "--after", JSON.parse(cursor!)]);
    expect(rest.items.map((s: { id: string }) => s.id)).toEqual([ids[0], delayed]);
    expect((await orqJson(["list", "--ns", "ls", "--topic", "t", "--all"])).items).toHaveLength(4);
    const none = await orq(["list", "--ns", "ls", "--topic", "nothing"]);
    expect(none.code).toBe(0);
    expect(none.stderr).toContain("no items");
    const badState = await orq(["list", "--ns", "ls", "--topic", "t", "--state", "ended"]);
    expect(badState.code).toBe(2);
    const badCursor = await orq(["list", "--ns", "ls", "--topic", "t", "--after", "nonsense"]);
    expect(badCursor.code).toBe(1);
    expect(badCursor.stderr).toContain("error BAD_REQUEST");
  });

  test("pause and resume: dequeue gets nothing while paused; topics shows it; human and --json", async () => {
    await orqJson(["enqueue", "--ns", "pz", "--topic", "t", "--payload", "x"]);
    const paused = await orq(["pause", "--ns", "pz", "--topic", "t"]);
    expect(paused.code).toBe(0);
    expect(paused.stdout.trim()).toBe("paused t until resumed");
    expect((await orqJson(["dequeue", "--ns", "pz", "--topic", "t"])).items).toEqual([]);
    expect((await orqJson(["topics", "--ns", "pz"])).topics).toEqual([{ topic: "t", ready: 1, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: true }]);
    expect((await orq(["topics", "--ns", "pz"])).stdout).toMatch(/t\s+1\s+0\s+0\s+0\s+0\s+yes/);
    const timed = await orqJson(["pause", "--ns", "pz", "--topic", "t", "--for-ms", "3600000"]);
    expect(timed.topic).toBe("t");
    expect(timed.paused_until_ms).toBeGreaterThan(Date.now());
    expect((await orqJson(["topics", "--ns", "pz"])).topics[0].paused_until_ms).toBe(timed.paused_until_ms);
    expect((await orq(["topics", "--ns", "pz"])).stdout).toMatch(/t\s+1\s+0\s+0\s+0\s+0\s+until \d{4}-/);
    expect((await orq(["pause", "--ns", "pz", "--topic", "t", "--for-ms", "0"])).code).toBe(2);
    expect(await orqJson(["resume", "--ns", "pz", "--topic", "t"])).toEqual({ topic: "t", resumed: true });
    expect((await orq(["resume", "--ns", "pz", "--topic", "t"])).stdout.trim()).toBe("t was not paused");
    expect((await orqJson(["dequeue", "--ns", "pz", "--topic", "t"])).items).toHaveLength(1);
  });

  test("cancel: done, then missing (exit 3)", async () => {
    const { id } = await orqJson(["enqueue", "--ns", "cx", "--topic", "t", "--payload", "x"]);
    const cancelled = await orq(["cancel", "--ns", "cx", id]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout.trim()).toBe("cancelled 1");
    const got = await orqJson(["get", "--ns", "cx", id]);
    expect(got.items[0]).toEqual({ id, state: "ended", outcome: "cancelled" });
    const missing = await orq(["cancel", "--ns", "cx", id, "--json"]);
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stdout)).toEqual({ cancelled: 0, missing: [id] });
  });

  test("dead and redrive", async () => {
    const { id } = await orqJson(["enqueue", "--ns", "dl", "--topic", "t", "--payload", "x", "--max-attempts", "1"]);
    const leased = await orqJson(["dequeue", "--ns", "dl", "--topic", "t"]);
    await orqJson(["nack", "--ns", "dl", leased.items[0].receipt]);
    const dead = await orqJson(["dead", "--ns", "dl", "--topic", "t"]);
    expect(dead.items.length).toBe(1);
    expect(dead.items[0]).toMatchObject({ id, state: "dead", attempt: 1 });
    const deadHuman = await orq(["dead", "--ns", "dl", "--topic", "t"]);
    expect(deadHuman.stdout).toMatch(/state\s+dead/);

    const redriven = await orq(["redrive", "--ns", "dl", "--topic", "t", id]);
    expect(redriven.code).toBe(0);
    expect(redriven.stdout.trim()).toBe("redriven 1");
    expect((await orqJson(["get", "--ns", "dl", id])).items[0]).toMatchObject({ state: "ready", attempt: 0 });
    expect(await orqJson(["redrive", "--ns", "dl", "--topic", "t"])).toEqual({ redriven: 0 });
    const noDead = await orq(["dead", "--ns", "dl", "--topic", "t"]);
    expect(noDead.stderr).toContain("no dead letters");
  });

  test("stats: every namespace by default, one with --ns", async () => {
    await orqJson(["enqueue", "--ns", "st", "--topic", "t", "--payload", "x"]);
    const all = await orqJson(["stats"]);
    expect(Object.keys(all.namespaces)).toContain("st");
    expect(all.server.connections).toBeGreaterThanOrEqual(1);
    const one = await orqJson(["stats", "--ns", "st"]);
    expect(Object.keys(one.namespaces)).toEqual(["st"]);
    expect(one.namespaces.st.ready).toBe(1);
    const human = await orq(["stats", "--ns", "st"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/NAMESPACE\s+READY.*\nst\s+1/);
    expect(human.stdout).toContain("topics of st:");
  });

  test("stats in words shows the unmatchable-items report that --json has", async () => {
    await orqJson(["enqueue", "--ns", "um", "--topic", "render", "--payload", "x", "--requires", '{"gpu": true}']);
    await orqJson(["enqueue", "--ns", "um", "--topic", "render", "--payload", "y", "--requires", '{"gpu": true}']);
    // A worker without a gpu asks the topic: it may take neither item.
    const asked = await orq(["dequeue", "--ns", "um", "--topic", "render", "--capabilities", '{"gpu": false}']);
    expect(asked.stderr).toContain("no items ready");
    const json = await orqJson(["stats", "--ns", "um"]);
    expect(json.namespaces.um.topics.render.unmatchable).toMatchObject({ asked: true, askers: 1, items: 2 });
    const human = await orq(["stats", "--ns", "um"]);
    expect(human.stdout).toMatch(/^NAMESPACE\s+READY\s+DELAYED\s+WAITING\s+LEASED\s+DEAD\s+UNMATCHABLE\s+TOPICS\s+WAITERS$/m);
    expect(human.stdout).toMatch(/^um\s+2\s+0\s+0\s+0\s+0\s+2\s+1\s+0$/m);
    expect(human.stdout).toMatch(/^render\s+2\s+0\s+0\s+0\s+0\s+2$/m);
    expect(human.stdout).toContain(
      "unmatchable (ready items no worker that asked in the last 10 minutes may take):\n  um / render: 2 items; 1 worker kinds asked\n    requires {\"gpu\":true}: 2 items\n",
    );
  });
});

describe("errors and exit codes", () => {
  test("a server error: `error CODE: message` on stderr, exit 1", async () => {
    const run = await orq(["enqueue", "--topic", "t", "--payload", "x", "--priority", "1", "--requires", '{"a": {"bogus": 1}}']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error BAD_REQUEST: /);
    expect(run.stdout).toBe("");
  });

  test("no server: error DISCONNECTED, exit 1", async () => {
    const run = await orq(["ping", "--server", "127.0.0.1:1"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error DISCONNECTED: cannot connect to 127\.0\.0\.1:1/);
  });

  test("bad usage exits 2: bad integer, missing required flag, two payload sources, bad --server, bad JSON", async () => {
    const cases = [
      ["enqueue", "--topic", "t", "--priority", "high"],
      ["enqueue", "--payload", "x"],
      ["enqueue", "--topic", "t", "--payload", "x", "--payload-file", "y"],
      ["ping", "--server", "host:notaport"],
      ["dequeue", "--topic", "t", "--capabilities", "{nope"],
      ["nosuchcommand"],
    ];
    for (const args of cases) {
      const run = await orq(args);
      if (run.code !== 2) throw new Error(`orq ${args.join(" ")}: exit ${run.code}, stderr ${run.stderr}`);
      expect(run.stdout).toBe("");
    }
    const both = await orq(["enqueue", "--topic", "t", "--payload", "x", "--payload-file", "y"]);
    expect(both.stderr).toMatch(/^error USAGE: /);
  });

  test("a mistyped flag is an unknown option, even when a required flag is missing because of it", async () => {
    for (const args of [["enqueue", "--topik", "t"], ["dequeue", "--topik", "t"], ["dead", "--topik", "t"]]) {
      const run = await orq(args);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe("error: unknown option '--topik'\n(Did you mean --topic?)\n");
    }
    // Without the typo, the missing required flag is still named.
    const missing = await orq(["enqueue", "--payload", "x"]);
    expect(missing.stderr).toBe("error: required option '--topic <topic>' not specified\n");
  });

  test("tokens: from --token or ORQ_TOKEN, never printed", async () => {
    const secret = "s3cret-token-value";
    const authServer = await ServerProcess.start({ config: { auth: { tokens: [{ token: secret, namespaces: ["*"] }] } } });
    try {
      const denied = await orq(["topics"], { server: authServer });
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/^error UNAUTHORIZED: .*\(the server requires a token: set ORQ_TOKEN, or pass --token\)\n$/);
      const wrong = await orq(["topics", "--token", "wrong-token-value"], { server: authServer });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/^error UNAUTHORIZED: .*\(the token from ORQ_TOKEN or --token is not one the server knows\)\n$/);
      expect(wrong.stderr + wrong.stdout).not.toContain("wrong-token-value");
      // ping needs no token (the contract): it answers, and says a token is needed for the rest.
      const ping = await orq(["ping"], { server: authServer });
      expect(ping.code).toBe(0);
      expect(ping.stdout).toMatch(/^pong from orq at 127\.0\.0\.1:\d+: [\d.]+ ms, server time .*\n\(the server requires a token for everything but ping: set ORQ_TOKEN, or pass --token\)\n$/);
      const pingJson = await orq(["ping", "--json"], { server: authServer });
      expect(JSON.parse(pingJson.stdout)).toMatchObject({ auth: "token required" });
      const pingWithToken = await orq(["ping"], { server: authServer, env: { ORQ_TOKEN: secret } });
      expect(pingWithToken.stdout).toMatch(/^pong from orq \d+\.\d+\.\d+ at /);
      const viaEnv = await orq(["enqueue", "--topic", "t", "--payload", "x", "--json"], { server: authServer, env: { ORQ_TOKEN: secret } });
      expect(viaEnv.code).toBe(0);
      const viaFlag = await orq(["stats", "--token", secret], { server: authServer });
      expect(viaFlag.code).toBe(0);
      const help = await orq(["stats", "--help"], { server: authServer, env: { ORQ_TOKEN: secret } });
      for (const run of [denied, viaEnv, viaFlag, help]) expect(run.stdout + run.stderr).not.toContain(secret);
    } finally {
      await authServer.cleanup();
    }
  });
});
