// The LMDB map's pages in this process's resident memory, and how to let
// them go. LMDB reads through a read-only shared mapping of data.mdb: every
// page a read, a delivery or recovery touches stays mapped, and counts in the
// process's RSS (RssFile), until the kernel reclaims it under memory
// pressure. After a restart with 1,000,000 items that is 264 MiB beside 324
// MiB of anonymous memory (docs/decisions/010-map-page-unmapping.md), and a
// container's memory limit and working-set figure count such pages while they
// are mapped and active.
//
// madvise(MADV_DONTNEED) over the mapping unmaps them at once. The page cache
// keeps them (nothing is written: the mapping is read-only and every write
// goes through LMDB's pwrite), and the next read of one maps it again: a minor
// fault, no I/O. Linux only; elsewhere `drop` does nothing. Reached through
// bun:ffi and the C library, like flock.ts, so it works in the standalone
// binary too.

import { readFileSync, realpathSync, statSync } from "node:fs";
import { FFIType } from "bun:ffi";
import { openLibc } from "./libc.ts";

/** madvise(2) advice that drops the range's page-table entries (Linux). */
const adviceDontNeed = 4;
/** The page size LMDB and /proc count in (4 KiB on the x86-64 and arm64 Linux orq ships for). */
export const pageBytes = 4096;

type Madvise = (address: number, length: number, advice: number) => number;

function loadMadvise(): Madvise | null {
  if (process.platform !== "linux") return null;
  try {
    const libc = openLibc({ madvise: { args: [FFIType.u64, FFIType.u64, FFIType.i32], returns: FFIType.i32 } }, "madvise");
    return (address, length, advice) => libc.symbols.madvise(address, length, advice) as number;
  } catch {
    // No C library to call: drop() does nothing.
    return null;
  }
}

/** The address ranges where this process maps `path` (from /proc/self/maps). */
export function mappedRanges(path: string): Array<{ start: number; end: number }> {
  let maps: string;
  try {
    maps = readFileSync("/proc/self/maps", "utf8");
  } catch {
    return [];
  }
  const ranges: Array<{ start: number; end: number }> = [];
  for (const line of maps.split("\n")) {
    // "start-end perms offset dev inode   path": the path ends the line, after spaces.
    if (!line.endsWith(path) || line.charAt(line.length - path.length - 1) !== " ") continue;
    const [start, end] = line.slice(0, line.indexOf(" ")).split("-").map((hex) => Number.parseInt(hex, 16));
    if (start !== undefined && end !== undefined && Number.isSafeInteger(start) && Number.isSafeInteger(end)) ranges.push({ start, end });
  }
  return ranges;
}

export class MappedFilePages {
  private readonly path: string;
  private readonly madvise: Madvise | null;

  constructor(filePath: string) {
    this.path = realpathSync(filePath);
    this.madvise = loadMadvise();
  }

  /** Whether drop() can do anything here (Linux, the C library loaded). */
  get supported(): boolean {
    return this.madvise !== null;
  }

  /**
   * Unmap the file's resident pages from this process (they stay in the page
   * cache). Only the part of each mapping the file covers is advised: LMDB
   * reserves a map far larger than the file. Returns the bytes advised.
   */
  drop(): number {
    if (this.madvise === null) return 0;
    let fileBytes: number;
    try {
      fileBytes = statSync(this.path).size;
    } catch {
      return 0;
    }
    let advised = 0;
    for (const { start, end } of mappedRanges(this.path)) {
      const length = Math.min(end - start, Math.ceil(fileBytes / pageBytes) * pageBytes);
      if (length <= 0) continue;
      if (this.madvise(start, length, adviceDontNeed) === 0) advised += length;
    }
    return advised;
  }
}
