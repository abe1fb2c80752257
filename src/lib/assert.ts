// Assertions are for programmer errors: a broken invariant stops the process
// (recovery from LMDB brings it back). Operating errors are returned values.
// The server keeps this promise in server/fatal.ts: an AssertionError is
// never answered or caught, it is logged at fatal level and the process
// exits 70, wherever it was thrown.

export class AssertionError extends Error {
  override name = "AssertionError";
}

export function assert(condition: unknown, message = "assertion failed"): asserts condition {
  if (!condition) throw new AssertionError(message);
}
