// Goal: an assertion failure ends the real server process, as lib/assert.ts
// promises, and a restart recovers from LMDB. The test-only trigger
// ORQ_TEST_ASSERT_OP=<op> (src/cli/serve.ts, docs/OPERATIONS.md) makes that
// op fail an assertion inside its handler: the server must not answer it,
// must log one fatal line and exit with code 70, and the restarted server
// must still hold every change it acknowledged before.

import { afterEach, describe, expect, test } from "bun:test";
import { assertionExitCode } from "../../src/server/fatal.ts";
import { RawConnection } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

let server: ServerProcess | null = null;

afterEach(async () => {
  await server?.cleanup();
  server = null;
});

describe("a failed assertion", () => {
  test("stops the server with exit code 70 and a fatal log line; a restart recovers what was acknowledged", async () => {
    // No dashboard: its history sampler calls stats too, which would trip the assertion before the test does.
    server = await ServerProcess.start({ env: { ORQ_TEST_ASSERT_OP: "stats" }, args: ["--ui-port", "off"] });
    const conn = await RawConnection.connect(server.port);
    const enqueued = await conn.call({ id: 1, op: "enqueue", ns: "a", items: [{ topic: "t", payload: new Uint8Array([1]) }, { topic: "t", payload: new Uint8Array([2]) }] });
    const ids = enqueued.ids as string[];
    const taken = await conn.call({ id: 2, op: "dequeue", ns: "a", topics: [{ topic: "t", count: 1 }] });
    const delivery = (taken.items as Array<{ id: string; receipt: string }>)[0]!;
    expect(await conn.call({ id: 3, op: "ack", ns: "a", receipts: [delivery.receipt] })).toMatchObject({ ok: true, acked: 1 });
    // Other ops still work with the trigger set.
    expect(await conn.call({ id: 4, op: "ping" })).toMatchObject({ ok: true });

    conn.send({ id: 5, op: "stats" });
    expect(await server.waitForExit()).toBe(assertionExitCode);
    await conn.waitClosed();
    expect(conn.replies.some((reply) => reply.id === 5)).toBe(false);
    const fatal = server.stderrLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === "fatal");
    expect(fatal.length).toBe(1);
    expect(fatal[0]).toMatchObject({ msg: "assertion failed: stopping (a restart recovers from storage)" });
    expect(JSON.stringify(fatal[0])).toContain("test-only assertion in op stats (ORQ_TEST_ASSERT_OP)");

    await server.restart();
    const again = await RawConnection.connect(server.port);
    const got = await again.call({ id: 1, op: "get", ns: "a", ids });
    const states = got.items as Array<{ id: string; state: string; outcome?: string }>;
    const acked = states.find((item) => item.id === delivery.id);
    const other = states.find((item) => item.id !== delivery.id);
    expect(acked).toMatchObject({ state: "ended", outcome: "acked" });
    expect(other).toMatchObject({ state: "ready" });
    again.close();
  });
});
