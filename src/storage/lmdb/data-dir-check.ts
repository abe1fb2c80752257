// Checks on the data dir before LMDB touches it. Some bad storage does not make
// lmdb-js throw: under Bun it crashes the process (a segfault on a data.mdb of
// random bytes, a bus error when a mapped page cannot be backed on a full
// disk). So orq looks first and refuses with one clear line.

import { accessSync, closeSync, constants as fsConstants, mkdirSync, openSync, readSync, statSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { dataFileName } from "./lmdb-options.ts";

/** Where LMDB's meta page puts its magic number and data format version (this build's layout). */
const magicOffset = 24;
const lmdbMagic = 0xbeefc0de;
/** LMDB data format this lmdb build writes and reads (lmdb-js 3.x: format 2). */
const lmdbDataVersion = 2;
/** Two meta pages start every LMDB file; orq sets 4 KiB pages. */
const metaPagesBytes = 2 * 4096;
/**
 * Free space needed to open (1 MiB): LMDB maps its lock file and first pages,
 * and a mapped page the disk cannot back kills the process with SIGBUS.
 */
export const openFreeBytesMin = 1024 * 1024;

/**
 * Make the data dir if missing; then the reason it cannot be used, or null.
 * System errors (EACCES, ENOTDIR, ...) are thrown for the caller to word.
 */
export function dataDirProblem(dataDir: string): string | null {
  const stats = statSync(dataDir, { throwIfNoEntry: false });
  if (stats === undefined) mkdirSync(dataDir, { recursive: true });
  else if (!stats.isDirectory()) return "it is a file, not a directory";
  accessSync(dataDir, fsConstants.R_OK | fsConstants.W_OK | fsConstants.X_OK);
  const space = statfsSync(dataDir);
  const freeBytes = space.bavail * space.bsize;
  if (freeBytes < openFreeBytesMin) {
    return `the disk is full (${Math.floor(freeBytes / 1024)} KiB free; opening needs at least ${openFreeBytesMin / 1024} KiB)`;
  }
  const dataPath = join(dataDir, dataFileName);
  const dataFile = statSync(dataPath, { throwIfNoEntry: false });
  if (dataFile === undefined) return null;
  if (!dataFile.isFile()) return `${dataFileName} is not a regular file`;
  return dataFileProblem(dataPath, dataFile.size);
}

/** Why an existing data.mdb cannot be an LMDB environment, or null when its header looks right. */
function dataFileProblem(path: string, sizeBytes: number): string | null {
  // An empty file is what a crash during the very first open leaves; LMDB initialises it.
  if (sizeBytes === 0) return null;
  if (sizeBytes < metaPagesBytes) return `data.mdb is ${sizeBytes} bytes, too short to be an LMDB database (truncated, or not LMDB)`;
  const header = new Uint8Array(magicOffset + 8);
  const fd = openSync(path, "r");
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  const view = new DataView(header.buffer);
  if (view.getUint32(magicOffset, true) !== lmdbMagic) {
    return "data.mdb is not an LMDB database (corrupted, or a file from another program)";
  }
  const version = view.getUint32(magicOffset + 4, true);
  if (version !== lmdbDataVersion) return `data.mdb uses LMDB data format ${version}; this build reads format ${lmdbDataVersion}`;
  return null;
}
