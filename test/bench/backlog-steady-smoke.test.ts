// Goal: keep `bench/backlog-steady.ts` from rotting. Runs it against a real
// orq with a tiny backlog and load and checks what it prints: the delay
// line, the RSS line, that the server logged at debug level (the governor's
// collections are read from debug lines), and the governor's collections,
// which must be none but the small heap's cadence (a heap this small stays
// under the governor's floor) and say so. No
// timing assertions.

import { expect, test } from "bun:test";
import { join } from "node:path";

const REPO_ROOT = join(import.meta.dir, "..", "..");
/** The run takes about 10 s (start, backlog, 5 s of warm-up and 2 of load, stop); the margin covers a loaded CI machine. */
const RUN_TIMEOUT_MS = 90_000;

test(
  "bench/backlog-steady.ts, tiny: prints the delay, RSS and the governor's (absent) collections",
  async () => {
    const child = Bun.spawn(
      [process.execPath, join(REPO_ROOT, "bench", "backlog-steady.ts"), "--items", "2000", "--rate", "500", "--duration-s", "2"],
      { cwd: REPO_ROOT, stdout: "pipe", stderr: "pipe" },
    );
    const [exitCode, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    expect({ exitCode, stderr: exitCode === 0 ? "" : stderr.slice(-3000) }).toEqual({ exitCode: 0, stderr: "" });
    expect(stdout).toContain("backlog 2000 items; steady load 500/s offered for 2 s, strict");
    expect(stdout).toMatch(/delivered \d+\/s; delay p50 [\d.]+ p99 [\d.]+ p99\.9 [\d.]+ max [\d.]+ ms/);
    expect(stdout).toMatch(/RSS through the steady phase: max \d+ MiB, at its end \d+ MiB/);
    // The server logged at debug level (an earlier version set ORQ_LOG_LEVEL in its own environment, which the
    // spawned server never saw, and counted no collections on any build).
    expect(Number(/server log: (\d+) debug lines/.exec(stdout)?.[1] ?? 0)).toBeGreaterThan(0);
    // Only the small heap's cadence (one full collection per 30 s of requests) may collect here; a slow machine may reach it.
    expect(stdout).toMatch(/governor collections: loading (\d+) \(0 at the stand-aside ceiling, \1 on the cadence\), blocking \d+ ms in all/);
    expect(stdout).toMatch(/governor collections: steady (\d+) \(0 at the stand-aside ceiling, \1 on the cadence, none pacing\), blocking \d+ ms in all/);
    expect(stdout).toContain("no pacing collections: the heap stayed under the governor's floor, 128 MiB");
  },
  RUN_TIMEOUT_MS,
);
