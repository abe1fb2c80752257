// Write calls per storage commit under a concurrent enqueue load: how many
// separate regions of the LMDB file one group commit rewrites.
//
// Why: LMDB writes a commit's dirty pages with one `pwrite` per contiguous
// run, then fsyncs. Pages of one B-tree's right edge are allocated together
// and land in few runs; pages of many trees land in many. So `pwrite` calls
// per `fdatasync` tell how scattered a commit's writes are, which the
// throughput figures alone hide under the box's noise (BENCHMARKS.md,
// "Pages per commit").
//
// It starts orq (strict, 16 shards, as bench:load does), counts the server's
// `pwrite64` and `fdatasync` system calls with `perf stat` (Linux perf with
// the syscalls tracepoints; run as root), and offers `--conns` connections x
// `--lanes` enqueues in flight of `--batch` items each for `--seconds`.
// `ORQ_BENCH_MAIN` runs another build's src/cli/main.ts, for A/B pairs.
//
// Run: ./node_modules/.bin/bun bench/commit-pages.ts [--batch 1] [--conns 8]
//   [--lanes 8] [--seconds 8]

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { OrqConn } from "./load/orq-conn.ts";
import { startOrq } from "./load/processes.ts";
import { enqueueTemplate } from "./load/systems.ts";

const { values } = parseArgs({
  options: {
    batch: { type: "string", default: "1" },
    conns: { type: "string", default: "8" },
    lanes: { type: "string", default: "8" },
    seconds: { type: "string", default: "8" },
  },
});
const batch = Number(values.batch);
const conns = Number(values.conns);
const lanes = Number(values.lanes);
const seconds = Number(values.seconds);

if (Bun.which("perf") === null) {
  console.error("commit-pages: needs Linux perf (`perf stat` with the syscalls tracepoints)");
  process.exit(2);
}

/** One counter's total from `perf stat -o` output. */
function counted(text: string, event: string): number {
  const match = new RegExp(`([\\d,]+)\\s+${event}`).exec(text);
  if (match === null) throw new Error(`commit-pages: perf stat did not count ${event} (run as root?)`);
  return Number((match[1] as string).replaceAll(",", ""));
}

const dir = mkdtempSync(join(tmpdir(), "orq-commit-pages-"));
const child = await startOrq(join(dir, "data"), "strict", join(dir, "orq.log"));
const perfOut = join(dir, "perf.txt");
const perf = Bun.spawn(
  ["perf", "stat", "-e", "syscalls:sys_enter_pwrite64,syscalls:sys_enter_fdatasync", "-p", String(child.pid), "-o", perfOut],
  { stderr: "ignore" },
);
try {
  // perf attaches asynchronously; give it a moment before the load.
  await Bun.sleep(300);
  const template = enqueueTemplate(batch);
  const endMs = performance.now() + seconds * 1000;
  let items = 0;
  await Promise.all(
    Array.from({ length: conns }, async () => {
      const conn = await OrqConn.connect(child.host, child.port);
      const lane = async () => {
        while (performance.now() < endMs) {
          await conn.callTemplate(template);
          items += batch;
        }
      };
      await Promise.all(Array.from({ length: lanes }, lane));
      conn.close();
    }),
  );
  perf.kill("SIGINT");
  await perf.exited;
  const text = readFileSync(perfOut, "utf8");
  const writes = counted(text, "syscalls:sys_enter_pwrite64");
  const commits = counted(text, "syscalls:sys_enter_fdatasync");
  console.log(`batch ${batch}, ${conns} conns x ${lanes} in flight, ${seconds} s, strict`);
  console.log(`${(items / seconds).toFixed(0)} items/s; ${commits} commits, ${(items / commits).toFixed(1)} items and ${(writes / commits).toFixed(2)} pwrite calls per commit`);
} finally {
  perf.kill("SIGINT");
  await child.stop();
  rmSync(dir, { recursive: true, force: true });
}
