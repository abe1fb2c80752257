// Goal: an assertion that fails on the beanstalkd port stops the real server
// as one on the MessagePack port does (server/fatal.ts): no answer, one fatal
// line, exit code 70; and a restart recovers every job it acknowledged. The
// test-only trigger ORQ_TEST_ASSERT_OP=<name> (src/cli/serve.ts) makes the
// beanstalkd command of that name fail an assertion before it runs.

import { afterEach, describe, expect, test } from "bun:test";
import { assertionExitCode } from "../../src/server/fatal.ts";
import { ServerProcess } from "../support/server-process.ts";
import { BeanstalkWire } from "./support/beanstalk-wire.ts";

let server: ServerProcess | null = null;

afterEach(async () => {
  await server?.cleanup();
  server = null;
});

describe("a failed assertion on the beanstalkd port", () => {
  test("stops the server with exit code 70 and a fatal line; a restart recovers what was acknowledged", async () => {
    server = await ServerProcess.start({ env: { ORQ_TEST_ASSERT_OP: "list-tubes" }, args: ["--beanstalk-port", "0", "--ui-port", "off"] });
    const wire = await BeanstalkWire.connect(server.beanstalkPort!);
    expect(await wire.command("use kept")).toBe("USING kept");
    const id = /^INSERTED (\d+)$/.exec(await wire.command("put 5 0 60 4\r\nkept"))![1]!;
    // Other commands still work with the trigger set.
    expect(await wire.command("list-tube-used")).toBe("USING kept");

    wire.send("list-tubes\r\n");
    expect(await server.waitForExit()).toBe(assertionExitCode);
    expect(await wire.answer()).toBe("<closed>");
    const fatal = server.stderrLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === "fatal");
    expect(fatal).toEqual([expect.objectContaining({ msg: "assertion failed: stopping (a restart recovers from storage)", front_end: "beanstalk" })]);
    expect(JSON.stringify(fatal[0])).toContain("test-only assertion in beanstalkd command list-tubes (ORQ_TEST_ASSERT_OP)");

    await server.restart();
    const again = await BeanstalkWire.connect(server.beanstalkPort!);
    expect(await again.command(`peek ${id}`)).toBe(`FOUND ${id} 4\nkept`);
    again.close();
  });
});
