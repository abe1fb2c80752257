// Goal: the beanstalkd port reports to the request-done hook as the
// MessagePack port does: once per command, in answer order, with its op and
// code labels and a duration from its arrival (a pipelined run of puts is one
// report per put; a command queued behind a waiting reserve counts its wait);
// and an assertion that fails in a command goes to the fatal handler, with no
// answer sent.

import { afterEach, describe, expect, test } from "bun:test";
import { BeanstalkServer } from "../../src/beanstalk/beanstalk-server.ts";
import { AssertionError } from "../../src/lib/assert.ts";
import type { LogFields } from "../../src/server/logger.ts";
import { silentLogger } from "../../src/server/logger.ts";
import { Harness } from "../engine/support/harness.ts";
import { BeanstalkWire } from "./support/beanstalk-wire.ts";

interface Report {
  op: string;
  code: string;
  durationMs: number;
}

let server: BeanstalkServer | null = null;

afterEach(() => {
  server?.close();
  server = null;
});

function start(h: Harness, options: { testAssertCommand?: string } = {}) {
  const reports: Report[] = [];
  const fatal: Array<{ error: unknown; context: LogFields }> = [];
  server = BeanstalkServer.start({
    host: "127.0.0.1",
    port: 0,
    engine: h.engine,
    namespace: "jobs",
    limits: h.limits,
    clock: h.clock,
    version: "test",
    logger: silentLogger,
    onRequestDone: (op, code, durationMs) => reports.push({ op, code, durationMs }),
    fatal: (error, context) => fatal.push({ error, context }),
    testAssertCommand: options.testAssertCommand ?? null,
  });
  return { port: server.port, reports, fatal };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await Bun.sleep(5);
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}

describe("the request-done hook", () => {
  test("once per command, in order, with its labels", async () => {
    const h = new Harness();
    const s = start(h);
    const wire = await BeanstalkWire.connect(s.port);
    // Three pipelined puts run as one engine enqueue, and are still three requests.
    wire.send("use t\r\nput 0 0 10 1\r\na\r\nput 0 0 10 1\r\nb\r\nput 0 0 10 1\r\nc\r\n");
    for (let i = 0; i < 4; i++) await wire.answer();
    await wire.command("watch t");
    const reserved = await wire.command("reserve");
    const id = /^RESERVED (\d+) /.exec(reserved)![1]!;
    expect(await wire.command(`delete ${id}`)).toBe("DELETED");
    expect(await wire.command(`delete ${id}`)).toBe("NOT_FOUND");
    expect(await wire.command("bogus")).toBe("UNKNOWN_COMMAND");
    // A body past the job size maximum is skipped unread and answered JOB_TOO_BIG.
    const tooBig = h.limits.beanstalkJobBytesMax + 1;
    wire.send(`put 0 0 10 ${tooBig}\r\n${"x".repeat(tooBig)}\r\n`);
    expect(await wire.answer()).toBe("JOB_TOO_BIG");
    wire.send("quit\r\n");
    await wire.closed();
    await until(() => s.reports.length === 11, "eleven reports");
    expect(s.reports.map((r) => [r.op, r.code])).toEqual([
      ["beanstalk:use", "OK"],
      ["beanstalk:put", "OK"],
      ["beanstalk:put", "OK"],
      ["beanstalk:put", "OK"],
      ["beanstalk:watch", "OK"],
      ["beanstalk:reserve", "OK"],
      ["beanstalk:delete", "OK"],
      ["beanstalk:delete", "NOT_FOUND"],
      ["beanstalk:unknown", "UNKNOWN_COMMAND"],
      ["beanstalk:put", "JOB_TOO_BIG"],
      ["beanstalk:quit", "OK"],
    ]);
    expect(s.reports.every((r) => r.durationMs >= 0)).toBe(true);
  });

  test("a command behind a waiting reserve counts its wait from its arrival", async () => {
    const h = new Harness();
    const s = start(h);
    const worker = await BeanstalkWire.connect(s.port);
    // The reserve waits for a job; list-tube-used waits behind it, as beanstalkd runs a connection's commands in order.
    worker.send("reserve\r\nlist-tube-used\r\n");
    await until(() => h.engine.stats(null, h.now).engine?.parkedWaitersTotal === 1, "the parked reserve");
    const waitedMs = 30;
    await Bun.sleep(waitedMs);
    const producer = await BeanstalkWire.connect(s.port);
    expect(await producer.command("put 0 0 10 1\r\nx")).toMatch(/^INSERTED /);
    expect(await worker.answer()).toMatch(/^RESERVED /);
    expect(await worker.answer()).toBe("USING default");
    await until(() => s.reports.length === 3, "three reports");
    const listed = s.reports.find((r) => r.op === "beanstalk:list-tube-used")!;
    expect(listed.durationMs).toBeGreaterThanOrEqual(waitedMs - 1);
    worker.close();
    producer.close();
  });
});

describe("an assertion in a command", () => {
  test("goes to the fatal handler with the connection, and the command is not answered", async () => {
    const h = new Harness();
    const s = start(h, { testAssertCommand: "list-tubes" });
    const wire = await BeanstalkWire.connect(s.port);
    expect(await wire.command("list-tube-used")).toBe("USING default");
    wire.send("list-tubes\r\n");
    await until(() => s.fatal.length === 1, "the fatal call");
    expect(s.fatal[0]!.error).toBeInstanceOf(AssertionError);
    expect((s.fatal[0]!.error as Error).message).toContain("test-only assertion in beanstalkd command list-tubes");
    expect(s.fatal[0]!.context).toEqual({ front_end: "beanstalk", connection: 1 });
    expect(s.reports.map((r) => r.op)).toEqual(["beanstalk:list-tube-used"]);
    wire.close();
  });
});
