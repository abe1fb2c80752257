// The one native call Bun and Node do not offer: flock(2) on an open file,
// reached through bun:ffi and the C library that is always present on Linux
// and macOS. A flock lock belongs to the open file, so the kernel drops it when
// the holder closes the file or dies in any way, kill -9 included: no stale
// lock is ever left behind. It works the same in the standalone binary
// (`bun build --compile`), which loads the system's C library at run time.

import { FFIType, read, type Pointer } from "bun:ffi";
import { openLibc } from "./libc.ts";

/** flock(2) operation bits, the same on Linux and macOS. */
const lockExclusive = 2;
const lockNonBlocking = 4;

/** errno when a non-blocking flock finds the file locked by another open file (EWOULDBLOCK). */
const wouldBlockErrno = process.platform === "darwin" ? 35 : 11;
/** errno when a signal interrupted the call (EINTR): try again. */
const interruptedErrno = 4;
/** Tries after EINTR before giving up: a signal storm must not loop forever. */
const interruptedTriesMax = 100;

/** The C function that returns the address of the calling thread's errno. */
const errnoFunction = process.platform === "darwin" ? "__error" : "__errno_location";

/** The C library with flock bound; opened per lock taken (once per process), so nothing is cached. */
function loadLibc() {
  return openLibc(
    {
      flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
      [errnoFunction]: { args: [], returns: FFIType.ptr },
    },
    "flock",
  );
}

/**
 * Take an exclusive flock on `fd` without waiting. "locked" when this process
 * now holds it, "held" when another open file holds it; any other failure
 * (e.g. ENOLCK, or a file system without flock) throws.
 */
export function tryLockExclusive(fd: number): "locked" | "held" {
  const libc = loadLibc();
  const errnoAddress = libc.symbols[errnoFunction] as () => Pointer | null;
  try {
    for (let tries = 1; ; tries++) {
      if (libc.symbols.flock(fd, lockExclusive | lockNonBlocking) === 0) return "locked";
      const address = errnoAddress();
      const errno = address === null ? -1 : read.i32(address, 0);
      if (errno === wouldBlockErrno) return "held";
      if (errno !== interruptedErrno || tries >= interruptedTriesMax) throw new Error(`flock failed (errno ${errno})`);
    }
  } finally {
    // The lock belongs to the open file, not to the library handle.
    libc.close();
  }
}
