// Goal: with tokens in the config file, a real server refuses every op but
// hello and ping until a valid hello (UNAUTHORIZED), scopes tokens to their
// namespaces (FORBIDDEN), lets hello be sent again (a failed one drops the
// authentication), shows a scoped token only its namespaces in stats, and
// never writes a token to its logs.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OrqClient, OrqError } from "../../src/client/index.ts";
import { RawConnection } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";

let server: ServerProcess;

beforeAll(async () => {
  server = await ServerProcess.start({
    args: ["--log-level", "debug"],
    config: {
      auth: {
        tokens: [
          { token: "billing-secret", namespaces: ["billing"] },
          { token: "admin-secret", namespaces: ["*"] },
        ],
      },
      namespaces: { billing: { enqueue_per_minute: 6000 } },
    },
  });
});

afterAll(async () => {
  await server?.cleanup();
});

describe("auth", () => {
  test("UNAUTHORIZED before hello; hello and ping allowed", async () => {
    const conn = await RawConnection.connect(server.port);
    expect((await conn.call({ op: "ping" })).ok).toBe(true);
    expect((await conn.call({ op: "enqueue", ns: "billing", items: [{ topic: "t" }] })).error!.code).toBe("UNAUTHORIZED");
    expect((await conn.call({ op: "stats" })).error!.code).toBe("UNAUTHORIZED");
    expect((await conn.call({ op: "hello", protocol: 1 })).error!.code).toBe("UNAUTHORIZED");
    expect((await conn.call({ op: "hello", protocol: 1, token: "billing-secre" })).error!.code).toBe("UNAUTHORIZED");
    expect((await conn.call({ op: "enqueue", ns: "billing", items: [{ topic: "t" }] })).error!.code).toBe("UNAUTHORIZED");
    conn.close();
  });

  test("a scoped token: its namespace works, others are FORBIDDEN; stats shows only its namespaces", async () => {
    const conn = await RawConnection.connect(server.port);
    expect((await conn.call({ op: "hello", protocol: 1, token: "billing-secret" })).ok).toBe(true);
    expect((await conn.call({ op: "enqueue", ns: "billing", items: [{ topic: "t" }] })).ok).toBe(true);
    expect((await conn.call({ op: "enqueue", ns: "other", items: [{ topic: "t" }] })).error!.code).toBe("FORBIDDEN");
    expect((await conn.call({ op: "stats", ns: "other" })).error!.code).toBe("FORBIDDEN");
    for (const op of ["list", "pause", "resume"]) {
      expect((await conn.call({ op, ns: "other", topic: "t" })).error!.code).toBe("FORBIDDEN");
      expect((await conn.call({ op, ns: "billing", topic: "t" })).ok).toBe(true);
    }
    const stats = await conn.call({ op: "stats" });
    expect(stats.ok).toBe(true);
    expect(Object.keys((stats.namespaces ?? {}) as object)).not.toContain("other");
    // Re-hello with a bad token drops the authentication; a good one restores it.
    expect((await conn.call({ op: "hello", protocol: 1, token: "nope" })).error!.code).toBe("UNAUTHORIZED");
    expect((await conn.call({ op: "topics", ns: "billing" })).error!.code).toBe("UNAUTHORIZED");
    expect((await conn.call({ op: "hello", protocol: 1, token: "admin-secret" })).ok).toBe(true);
    expect((await conn.call({ op: "topics", ns: "other" })).ok).toBe(true);
    conn.close();
  });

  test("the client sends its token at connect; a wrong token fails connect with UNAUTHORIZED", async () => {
    const client = await OrqClient.connect({ port: server.port, token: "admin-secret" });
    expect((await client.enqueue("anything", [{ topic: "t" }])).length).toBe(1);
    await client.close();
    const error = await OrqClient.connect({ port: server.port, token: "wrong" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrqError);
    expect((error as OrqError).code).toBe("UNAUTHORIZED");
  });

  test("tokens never appear in the logs", () => {
    const logs = server.logs();
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain("billing-secret");
    expect(logs).not.toContain("admin-secret");
  });
});
