// After a soak (`npm run soak`), what the LMDB file holds: data.mdb's size,
// and per sub-database its entries and pages (leaf, branch, overflow), with
// the environment's free pages. Shows where file-backed RSS comes from: the
// acked log's pages, item pages, or freed pages LMDB has not reused.
// Read-only; run on a stopped server's data dir.

import { statSync } from "node:fs";
import { join } from "node:path";
import { open } from "lmdb";

interface DbStats {
  pageSize?: number;
  treeDepth?: number;
  treeBranchPageCount?: number;
  treeLeafPageCount?: number;
  entryCount?: number;
  overflowPages?: number;
  free?: { entryCount?: number };
  lastPageNumber?: number;
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/** Lines describing the data dir's LMDB file, or one line saying why not. */
export function dbStatsLines(dataDir: string): string[] {
  const path = join(dataDir, "data.mdb");
  let fileBytes: number;
  try {
    fileBytes = statSync(path).size;
  } catch {
    return [`  data.mdb: none in ${dataDir}`];
  }
  const env = open({ path, noSubdir: true, maxDbs: 4200, readOnly: true });
  try {
    const root = env.getStats() as DbStats;
    const pageSize = root.pageSize ?? 4096;
    const lines = [`  data.mdb ${mib(fileBytes)} MiB, last page ${root.lastPageNumber ?? "?"} (${mib(((root.lastPageNumber ?? 0) + 1) * pageSize)} MiB used)`];
    const totals = { entries: 0, pages: 0 };
    const shards = { entries: 0, pages: 0 };
    for (const name of [...env.getKeys()].map(String)) {
      const stats = env.openDB({ name, encoding: "binary" }).getStats() as DbStats;
      const pages = (stats.treeLeafPageCount ?? 0) + (stats.treeBranchPageCount ?? 0) + (stats.overflowPages ?? 0);
      totals.entries += stats.entryCount ?? 0;
      totals.pages += pages;
      if (name.startsWith("shard-")) {
        shards.entries += stats.entryCount ?? 0;
        shards.pages += pages;
        continue;
      }
      lines.push(`  ${name}: ${stats.entryCount} entries, ${pages} pages (${mib(pages * pageSize)} MiB; ${stats.overflowPages ?? 0} overflow)`);
    }
    lines.push(`  shards: ${shards.entries} entries, ${shards.pages} pages (${mib(shards.pages * pageSize)} MiB)`);
    lines.push(`  in trees: ${totals.pages} pages (${mib(totals.pages * pageSize)} MiB); free-list entries ${root.free?.entryCount ?? "?"}`);
    return lines;
  } finally {
    env.close();
  }
}

if (import.meta.main) {
  const dataDir = process.argv[2];
  if (dataDir === undefined) {
    console.log("bun bench/soak/db-stats.ts DATA_DIR");
    process.exit(2);
  }
  for (const line of dbStatsLines(dataDir)) console.log(line);
}
