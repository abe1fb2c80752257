// What a failed LMDB commit reports: the cause lmdb-js hides behind its
// generic rejection, so the breaker's reason and the warn log name the real
// error (EIO, ENOSPC, MDB_MAP_FULL).

/**
 * The error a failed commit reports. lmdb-js rejects with a generic "Commit
 * failed" whose `commitError` promise holds the cause (e.g. EIO/ENOSPC from
 * the write); it must be awaited here or it surfaces as an unhandled rejection.
 */
export async function commitFailure(error: unknown): Promise<Error> {
  const commitError = (error as { commitError?: unknown } | null)?.commitError;
  if (commitError instanceof Promise) {
    const cause: unknown = await commitError.then(
      () => null,
      (reason: unknown) => reason,
    );
    if (cause instanceof Error) return new Error(`LMDB commit failed: ${cause.message}`, { cause });
  }
  if (error instanceof Error) return error;
  return new Error(`LMDB commit failed: ${String(error)}`);
}
