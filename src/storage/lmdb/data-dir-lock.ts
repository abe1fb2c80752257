// One server per data dir. LMDB lets several processes share an environment
// by design, so two orq servers on one data dir would both recover the same
// items and both deliver them. Before LMDB opens, the store takes an exclusive
// flock on `orq.lock` in the data dir and writes its PID there; a second
// server finds the lock held and refuses with one line naming the holder. The
// kernel releases the lock when the holder exits in any way (kill -9
// included), so a crash never leaves a lock to clean up by hand; the PID left
// in the file after a crash is only a leftover and is overwritten.

import { closeSync, constants as fsConstants, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { StoreOpenError } from "../store.ts";
import { tryLockExclusive } from "./flock.ts";

/** The lock file inside the data dir (LMDB's own `data.mdb-lock` is shared by design, so it cannot serve). */
export const lockFileName = "orq.lock";

/** Longest PID text read back from a lock file: a PID is at most 7 digits on Linux, 5 on macOS. */
const pidTextBytesMax = 32;

export interface DataDirLock {
  /** Release the lock (closing the file releases the flock). Idempotent. */
  release(): void;
}

/**
 * Lock `dataDir` (which must exist) for this process, or throw a
 * StoreOpenError naming the process that holds it.
 */
export function lockDataDir(dataDir: string, pid: number = process.pid): DataDirLock {
  const path = join(dataDir, lockFileName);
  // Opened without O_TRUNC: the holder's PID must survive a refused open.
  const fd = openSync(path, fsConstants.O_RDWR | fsConstants.O_CREAT, 0o644);
  let outcome: "locked" | "held";
  try {
    outcome = tryLockExclusive(fd);
  } catch (error) {
    closeSync(fd);
    throw new StoreOpenError(`cannot lock data dir ${dataDir} (${lockFileName}): ${error instanceof Error ? error.message : String(error)}`);
  }
  if (outcome === "held") {
    closeSync(fd);
    throw heldError(dataDir, path);
  }
  const text = `${pid}\n`;
  ftruncateSync(fd, 0);
  writeSync(fd, text, 0);
  let released = false;
  return {
    release: () => {
      if (released) return;
      released = true;
      closeSync(fd);
    },
  };
}

/**
 * Refuse early, without creating anything: throws the same StoreOpenError as
 * lockDataDir when another process holds `dataDir`'s lock; does nothing when
 * the dir or its lock file does not exist, or the lock is free (it is let go
 * at once: lockDataDir takes it for real when the store opens). `orq serve`
 * calls it before its port checks, so a second `npm start` names the server
 * that holds the data dir rather than the port they share.
 */
export function refuseIfDataDirHeld(dataDir: string): void {
  const path = join(dataDir, lockFileName);
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_RDWR);
  } catch {
    // No lock file or no dir: nobody holds it. Any other problem is reported by the real lock.
    return;
  }
  let outcome: "locked" | "held" | "unknown";
  try {
    outcome = tryLockExclusive(fd);
  } catch {
    // flock itself failed: lockDataDir reports it with its reason when the store opens.
    outcome = "unknown";
  } finally {
    closeSync(fd);
  }
  if (outcome === "held") throw heldError(dataDir, path);
}

function heldError(dataDir: string, path: string): StoreOpenError {
  return new StoreOpenError(`data dir ${dataDir} is in use by another orq server (${holderOf(path)}); stop it, or give this one another --data-dir`);
}

/** "pid N" as the lock file says, or why it cannot say (the holder may not have written it yet). */
function holderOf(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8").slice(0, pidTextBytesMax).trim();
  } catch (error) {
    return `pid unknown: ${error instanceof Error ? error.message : String(error)}`;
  }
  return /^\d+$/.test(text) ? `pid ${text}` : "pid not yet written";
}
