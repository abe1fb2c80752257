// Goal: a failed assertion stops the process with exit code 70 after one
// fatal log line, wherever it is thrown: the handler picks the code, and an
// assertion raised while a commit encodes its batch (a bad record) escapes
// the group committer in a child process instead of being reported as a
// storage failure (the write set is never rejected with
// StorageUnavailableError).

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { AssertionError } from "../../src/lib/assert.ts";
import { assertionExitCode, exitOnFatal, uncaughtErrorExitCode } from "../../src/server/fatal.ts";
import { createJsonLogger } from "../../src/server/logger.ts";

const repoRoot = join(import.meta.dir, "..", "..");

describe("exitOnFatal", () => {
  test("an AssertionError exits 70, anything else 1, each after a fatal line written whatever the log level", () => {
    const lines: Array<Record<string, unknown>> = [];
    const codes: number[] = [];
    const logger = createJsonLogger("error", (line) => lines.push(JSON.parse(line) as Record<string, unknown>), () => 0);
    const fatal = exitOnFatal(logger, (code) => codes.push(code));
    fatal(new AssertionError("heap broken"), { op: "ack" });
    fatal(new Error("something else"), { source: "uncaught exception" });
    expect(codes).toEqual([assertionExitCode, uncaughtErrorExitCode]);
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      ["fatal", "assertion failed: stopping (a restart recovers from storage)"],
      ["fatal", "uncaught error: stopping"],
    ]);
    expect(lines[0]).toMatchObject({ op: "ack", error: { name: "AssertionError", message: "heap broken" } });
  });
});

describe("an assertion while a commit encodes its batch", () => {
  test("stops the process (exit 70) and is never reported as a storage failure", async () => {
    const script = `
      import { ManualClock } from "${repoRoot}/src/lib/clock.ts";
      import { GroupCommitter } from "${repoRoot}/src/storage/group-commit.ts";
      import { MemoryStore } from "${repoRoot}/src/storage/memory/memory-store.ts";
      import { StorageUnavailableError } from "${repoRoot}/src/storage/writer.ts";
      import { exitOnFatal, installFatalHandlers } from "${repoRoot}/src/server/fatal.ts";
      import { createJsonLogger } from "${repoRoot}/src/server/logger.ts";
      import { itemRecord } from "${repoRoot}/test/storage/record-fixtures.ts";
      installFatalHandlers(exitOnFatal(createJsonLogger("info", (line) => console.error(line), () => 0)));
      const writer = new GroupCommitter(new MemoryStore({ shards: 1 }), { clock: new ManualClock() });
      const set = writer.begin();
      set.putItem(0, 1, itemRecord({ state: "bogus" }));
      set.end().then(
        () => console.log("COMMITTED"),
        (error) => console.log(error instanceof StorageUnavailableError ? "REPORTED AS STORAGE FAILURE" : "REJECTED " + error),
      );
      setTimeout(() => console.log("STILL RUNNING"), 2000);
    `;
    const child = Bun.spawn([process.execPath, "-e", script], { cwd: repoRoot, stdout: "pipe", stderr: "pipe" });
    const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    expect({ code, stdout }).toEqual({ code: assertionExitCode, stdout: "" });
    const fatal = stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(fatal).toEqual([expect.objectContaining({ level: "fatal", msg: "assertion failed: stopping (a restart recovers from storage)" })]);
    expect(JSON.stringify(fatal[0])).toContain("item record: state bogus");
  });
});
