// Turns what goes wrong when a data dir is opened into one clear line for the
// operator (a StoreOpenError), so the server never starts with data missing
// and never prints a stack trace for a full disk or a wrong path.

import { StoreOpenError } from "../store.ts";

interface SystemError {
  code?: unknown;
  message?: unknown;
}

/** The operator-facing reason for a low-level error, by errno / LMDB code. */
function reasonFor(error: unknown): string {
  const { code, message } = (error ?? {}) as SystemError;
  const text = typeof message === "string" ? message : String(error);
  if (code === "EACCES" || code === "EPERM" || /permission denied|EACCES/i.test(text)) {
    return "permission denied (the server needs read and write access to the data dir)";
  }
  if (code === "ENOSPC" || /ENOSPC|no space left/i.test(text)) return "the disk is full (no space left on device)";
  if (code === "EROFS" || /read-only file system/i.test(text)) return "the file system is read-only";
  if (code === "ENOTDIR" || /not a directory/i.test(text)) return "a part of the path is a file, not a directory";
  if (/MDB_INVALID|not an LMDB file|MDB_VERSION_MISMATCH|MDB_CORRUPTED|-30793|-30794|-30796/i.test(text)) {
    return "data.mdb is not a valid LMDB database (corrupted, or a file from another program)";
  }
  return text.split("\n")[0] ?? "unknown error";
}

export function openError(dataDir: string, error: unknown): StoreOpenError {
  if (error instanceof StoreOpenError) return error;
  return new StoreOpenError(`cannot open data dir ${dataDir}: ${reasonFor(error)}`);
}
