// Goal: orq serve takes the LMDB map's pages out of its resident memory after
// recovery (src/cli/mapped-pages.ts). A server restarted on 30,000 items has
// read every page of data.mdb; with the drop, almost none stay mapped; with
// --idle-gc off (which turns the drop off with the governors) most do.

import { afterAll, describe, expect, test } from "bun:test";
import { realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { OrqClient } from "../../src/client/index.ts";
import { mappedResidentKiB } from "../support/mapped-resident.ts";
import { ServerProcess } from "../support/server-process.ts";

const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const server of servers) await server.cleanup();
});

async function residentAfterStart(dataDir: string, args: string[]): Promise<{ residentKiB: number; fileKiB: number }> {
  const server = await ServerProcess.start({ dataDir, args });
  servers.push(server);
  const path = realpathSync(join(dataDir, "data.mdb"));
  const residentKiB = mappedResidentKiB(server.pid as number, path);
  const fileKiB = statSync(path).size / 1024;
  await server.stop();
  return { residentKiB, fileKiB };
}

describe.skipIf(process.platform !== "linux")("the LMDB map's pages after recovery", () => {
  test("are dropped from the server's resident memory; with --idle-gc off they stay", async () => {
    const first = await ServerProcess.start({ args: ["--shards", "4"] });
    servers.push(first);
    const client = await OrqClient.connect({ port: first.port });
    const payload = new Uint8Array(300).fill(7);
    for (let batch = 0; batch < 30; batch++) {
      await client.enqueue("maps", Array.from({ length: 1000 }, () => ({ topic: "t", payload })));
    }
    await client.close();
    await first.stop();

    const dropped = await residentAfterStart(first.dataDir, ["--shards", "4"]);
    const kept = await residentAfterStart(first.dataDir, ["--shards", "4", "--idle-gc", "off"]);
    // 30,000 records of about 350 bytes: a file of 10 MiB and more, every page read by recovery.
    expect(dropped.fileKiB).toBeGreaterThan(8 * 1024);
    expect(kept.residentKiB).toBeGreaterThan(kept.fileKiB / 2);
    expect(dropped.residentKiB).toBeLessThan(dropped.fileKiB / 10);
  }, 120_000);
});
