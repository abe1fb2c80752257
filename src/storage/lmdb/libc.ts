// The C library through bun:ffi, for the few calls Bun and Node do not offer
// (flock.ts, map-pages.ts). It is always present on Linux and macOS, and the
// standalone binary (`bun build --compile`) loads it at run time too.

import { dlopen, type FFIFunction, type Library } from "bun:ffi";

/** C libraries to try, in order: glibc, musl (x86-64 and arm64), macOS. */
const libcCandidates =
  process.platform === "darwin" ? ["libSystem.B.dylib", "/usr/lib/libSystem.B.dylib"] : ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"];

/** The first C library that loads, with `symbols` bound; throws, naming `purpose` and every failure, when none does. */
export function openLibc<Fns extends Record<string, FFIFunction>>(symbols: Fns, purpose: string): Library<Fns> {
  const failures: string[] = [];
  for (const name of libcCandidates) {
    try {
      return dlopen(name, symbols);
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new Error(`cannot load the C library for ${purpose} (${failures.join("; ")})`);
}
