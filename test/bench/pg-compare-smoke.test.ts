// Goal: keep the PostgreSQL comparison (bench/cluster/compare-pg.ts) from
// rotting. Runs it at a tiny size (200 items after a warm-up of 50, one orq
// node, both priority orders) on its own PostgreSQL and checks that every
// system ran both shape pairs and processed every timed item exactly once (a
// warm-up item reaching the timed consumers would count as a repeat), that
// the report records the warm-up, that the WAL figure was read, and that the
// page renders every row and the warm-up. No timings are asserted: a rate only
// has to be a number above zero.

import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BEGIN, END, comparePage, replaceBetweenMarkers } from "../../bench/cluster/compare-page.ts";
import type { CompareReport } from "../../bench/cluster/compare-report.ts";
import { postgresAvailable } from "../support/postgres-server.ts";

const REPO_ROOT = join(import.meta.dir, "..", "..");
const ITEMS = 200;
const WARMUP_ITEMS = 50;
/** The run takes about 30 s on the 2-core build box; the margin covers a loaded CI machine. */
const RUN_TIMEOUT_MS = 240_000;
const EXPECTED_LABELS = ["orq, 1 node", "orq, 1 node, random priorities", "graphile-worker", "pg-boss"];

describe.skipIf(!postgresAvailable())("bench:pg-compare at a tiny size", () => {
  let report: CompareReport | null = null;

  test(
    "runs every system to completion and writes its JSON",
    async () => {
      const outDir = mkdtempSync(join(tmpdir(), "orq-pg-compare-smoke-"));
      const outPath = join(outDir, "pg-compare.json");
      const argv = [join(REPO_ROOT, "bench", "cluster", "compare-pg.ts"), "--items", String(ITEMS), "--warmup-items", String(WARMUP_ITEMS), "--nodes", "1", "--out", outPath];
      const child = Bun.spawn([process.execPath, ...argv], { cwd: REPO_ROOT, stdout: "pipe", stderr: "pipe" });
      const [exitCode, stderr] = await Promise.all([child.exited, new Response(child.stderr).text(), new Response(child.stdout).text()]);
      expect({ exitCode, stderr: exitCode === 0 ? "" : stderr.slice(-3000) }).toEqual({ exitCode: 0, stderr: "" });
      report = JSON.parse(readFileSync(outPath, "utf8")) as CompareReport;
      rmSync(outDir, { recursive: true, force: true });
      expect(report.failed).toEqual({});
      expect(report.options.warmupItems).toBe(WARMUP_ITEMS);
      expect(report.options.warmupPerProcess).toBe(true);
    },
    RUN_TIMEOUT_MS,
  );

  test("has a row for orq in both orders and for each library", () => {
    const labels = Object.keys(report?.results ?? {});
    for (const expected of EXPECTED_LABELS) expect({ expected, found: labels.some((label) => label.startsWith(expected)) }).toEqual({ expected, found: true });
    expect(labels.length).toBe(EXPECTED_LABELS.length);
  });

  test("every system processed every item exactly once, in both pairs", () => {
    for (const [label, pairs] of Object.entries(report?.results ?? {})) {
      for (const pair of ["batched", "single"] as const) {
        const r = pairs[pair];
        const counts = { label, pair, items: r?.items, processed: r?.processed, distinct: r?.distinct, duplicates: r?.duplicates };
        expect(counts).toEqual({ label, pair, items: ITEMS, processed: ITEMS, distinct: ITEMS, duplicates: 0 });
      }
    }
  });

  test("every rate and WAL figure is a number above zero", () => {
    for (const [label, pairs] of Object.entries(report?.results ?? {})) {
      for (const [pair, r] of Object.entries(pairs)) {
        for (const [figure, value] of Object.entries({ enqueuePerS: r.enqueuePerS, drainPerS: r.drainPerS, walBytesPerItem: r.walBytesPerItem })) {
          expect({ label, pair, figure, positive: Number.isFinite(value) && value > 0 }).toEqual({ label, pair, figure, positive: true });
        }
      }
    }
  });

  test("the page shows every row, and BENCHMARKS.md has its markers", () => {
    if (report === null) throw new Error("the run wrote no report");
    const page = comparePage(report, "smoke.json");
    for (const label of Object.keys(report.results)) expect(page).toContain(`| ${label} |`);
    expect(page).toContain(`after a warm-up of ${WARMUP_ITEMS} items per serving process`);
    const benchmarks = readFileSync(join(REPO_ROOT, "BENCHMARKS.md"), "utf8");
    expect(replaceBetweenMarkers(benchmarks, page)).toContain(`${BEGIN}\n${page}\n${END}`);
  });
});
