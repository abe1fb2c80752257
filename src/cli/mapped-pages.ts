// The LMDB map's resident pages, for orq serve: unmapped once after recovery
// (which touched every page of the store) and then whenever the process's
// file-backed resident memory has grown by mappedPages.growthBytes (the heap
// governor's tick, src/server/memory-governor.ts). Why: the map's pages count
// in the process's RSS until the kernel reclaims them, and a container's
// memory figures with them (src/storage/lmdb/map-pages.ts, docs/OPERATIONS.md).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mappedPages } from "../limits.ts";
import type { MappedPagesCheck } from "../server/memory-governor.ts";
import type { Logger } from "../server/logger.ts";
import { dataFileName } from "../storage/lmdb/lmdb-options.ts";
import { MappedFilePages, pageBytes } from "../storage/lmdb/map-pages.ts";

/** File-backed (and shared) resident bytes of this process: /proc/self/statm's third field, in pages. */
function fileResidentBytes(): number {
  try {
    const fields = readFileSync("/proc/self/statm", "latin1").split(" ");
    return Number(fields[2]) * pageBytes;
  } catch {
    return 0;
  }
}

/** Drops the map's pages now and returns the governor's check, or undefined where madvise is not available. */
export function mappedPagesCheck(dataDir: string, logger: Logger): MappedPagesCheck | undefined {
  const pages = new MappedFilePages(join(dataDir, dataFileName));
  if (!pages.supported) return undefined;
  const drop = (reason: string) => {
    const beforeBytes = fileResidentBytes();
    const advisedBytes = pages.drop();
    logger.debug("map pages dropped", { reason, advised_bytes: advisedBytes, file_resident_bytes: beforeBytes, file_resident_after_bytes: fileResidentBytes() });
  };
  drop("recovered");
  return { residentBytes: fileResidentBytes, drop: () => drop("grown"), growthBytes: mappedPages.growthBytes };
}

/**
 * The resident bytes of this process's mappings of the store's data file
 * (the Rss lines of /proc/self/smaps under each mapping of `path`), for
 * /metrics: what deliveries and the delivery prefetch read in. Null where
 * /proc cannot be read.
 */
export function mapResidentBytes(dataDir: string): number | null {
  let smaps: string;
  try {
    smaps = readFileSync("/proc/self/smaps", "latin1");
  } catch {
    return null;
  }
  const suffix = `/${dataFileName}`;
  let inMap = false;
  let kib = 0;
  for (const line of smaps.split("\n")) {
    // A mapping's header starts with its address range; its fields follow, one per line.
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inMap = line.endsWith(suffix) && line.includes(dataDir);
    else if (inMap && line.startsWith("Rss:")) kib += Number.parseInt(line.slice(4), 10) || 0;
  }
  return kib * 1024;
}
