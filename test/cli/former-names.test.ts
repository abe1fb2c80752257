// Goal: a real `orq serve` started with settings under their former names
// (`--max-frame-bytes`, `ORQ_BEANSTALK_MAX_JOB_BYTES`) runs with their values
// and logs one warning per former name at start, naming its replacement;
// `--help` lists only the new names.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RawConnection } from "../support/raw-connection.ts";
import { bunPath, mainPath, ServerProcess } from "../support/server-process.ts";

const frameBytesMax = 1024 * 1024;
let server: ServerProcess;

beforeAll(async () => {
  server = await ServerProcess.start({
    args: ["--shards", "1", "--max-frame-bytes", String(frameBytesMax)],
    env: { ORQ_BEANSTALK_MAX_JOB_BYTES: "1000" },
  });
});

afterAll(async () => {
  await server.cleanup();
});

/** The warn lines about former names in the server's log. */
function formerNameWarnings(): Array<Record<string, unknown>> {
  return server.stderrLines
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((record) => record.level === "warn" && typeof record.msg === "string" && record.msg.includes("former name"));
}

describe("settings under their former names", () => {
  test("are read, and each is warned of once at start", async () => {
    const conn = await RawConnection.connect(server.port);
    try {
      const hello = await conn.call({ op: "hello", protocol: 1 });
      expect(hello.max_frame_bytes).toBe(frameBytesMax);
    } finally {
      conn.close();
    }
    expect(formerNameWarnings().map((record) => [record.used, record.replacement])).toEqual([
      ["--max-frame-bytes", "--frame-bytes-max"],
      ["ORQ_BEANSTALK_MAX_JOB_BYTES", "ORQ_BEANSTALK_JOB_BYTES_MAX"],
    ]);
  });

  test("--help lists the new names only", () => {
    const help = Bun.spawnSync([bunPath, mainPath, "serve", "--help"], { stdout: "pipe", stderr: "pipe" }).stdout.toString();
    expect(help).toContain("--frame-bytes-max");
    expect(help).toContain("--beanstalk-job-bytes-max");
    expect(help).not.toContain("--max-frame-bytes");
    expect(help).not.toContain("--beanstalk-max-job-bytes");
  });
});
