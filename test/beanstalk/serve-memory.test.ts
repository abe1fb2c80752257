// Goal: in a real `orq serve`, beanstalkd traffic alone arms the memory policy
// as MessagePack traffic does, through the one request-done hook: the heap
// governor's check (whose tick also drops the LMDB map's pages) is armed by
// the first command of a burst ("heap governor armed", map_pages true), and
// the idle collection counts every command: after idleGcRequestsMin of them
// and a quiet second it asks for its collection ("idle gc", kind "hint"),
// with exactly that many requests. Nothing arms before the first command.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { idleGcRequestsMin } from "../../src/server/idle-gc.ts";
import { ServerProcess } from "../support/server-process.ts";
import { BeanstalkWire } from "./support/beanstalk-wire.ts";

let server: ServerProcess;

beforeAll(async () => {
  // No dashboard: its history sampler is not metered, but no other traffic at all keeps the counts exact.
  server = await ServerProcess.start({ args: ["--beanstalk-port", "0", "--ui-port", "off", "--log-level", "debug"] });
});

afterAll(async () => {
  await server?.cleanup();
});

type LogLine = Record<string, unknown>;

function lines(msg: string): LogLine[] {
  return server.stderrLines.map((line) => JSON.parse(line) as LogLine).filter((line) => line.msg === msg);
}

/** Waits for a log condition; the bound only guards a hung test on a loaded machine. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await Bun.sleep(20);
  if (!condition()) throw new Error(`timed out waiting for ${what}:\n${server.logs()}`);
}

describe("beanstalkd traffic and the memory policy", () => {
  test("arms the heap governor (with the map-page drops) and counts towards the idle collection, command by command", async () => {
    expect(lines("heap governor armed")).toEqual([]);
    const wire = await BeanstalkWire.connect(server.beanstalkPort!);
    // idleGcRequestsMin commands, pipelined: a use and then puts.
    const puts = idleGcRequestsMin - 1;
    wire.send(`use memory\r\n${"put 0 0 60 1\r\nx\r\n".repeat(puts)}`);
    expect(await wire.answer()).toBe("USING memory");
    for (let i = 0; i < puts; i++) expect(await wire.answer()).toMatch(/^INSERTED \d+$/);

    await until(() => lines("idle gc").length > 0, "the idle collection's hint");
    expect(lines("idle gc")).toEqual([expect.objectContaining({ kind: "hint", requests: idleGcRequestsMin })]);
    const armed = lines("heap governor armed");
    expect(armed.length).toBeGreaterThanOrEqual(1);
    expect(armed[0]).toMatchObject({ level: "debug", map_pages: process.platform === "linux" });

    // A quiet second has passed, so the governor has disarmed: the next command arms it again.
    expect(await wire.command("list-tube-used")).toBe("USING memory");
    await until(() => lines("heap governor armed").length === armed.length + 1, "the governor armed again");
    wire.close();
  });
});
