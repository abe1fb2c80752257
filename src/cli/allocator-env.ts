// The allocator settings `orq serve` runs with. Bun's allocator (mimalloc)
// reads its options from the environment once, when the process starts, so
// the server sets them by re-executing itself (execve: same PID, same
// arguments, same open descriptors) with them added, before it opens anything.
//
// The one setting: MIMALLOC_PURGE_DELAY=0. mimalloc keeps freed pages
// resident for `purge_delay` ms (100 by default) and purges them only on a
// later allocation or free, so a server that goes quiet right after a burst
// keeps the burst's freed memory resident until its next request or the
// idle collection. With 0 it returns them at once: measured 1 s after a
// 1,000,000-item load, 60-170 MiB less anonymous memory, for 25-45% more
// server CPU per enqueued item (docs/OPERATIONS.md, "Memory the allocator holds").
//
// An operator who sets a variable keeps their value (MIMALLOC_PURGE_DELAY=100
// restores mimalloc's default). Linux with glibc only; elsewhere, or if the
// exec fails, the server runs with the environment it was given.

import { allocatorEnv } from "../limits.ts";

/** Set in the re-executed process, so it never loops (and tests can see it ran). */
export const allocatorEnvMarker = "ORQ_ALLOCATOR_ENV_SET";

/** The variables to add: those of allocatorEnv the environment does not set already. */
export function missingAllocatorEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const missing: Record<string, string> = {};
  for (const [name, value] of Object.entries(allocatorEnv)) if (env[name] === undefined) missing[name] = value;
  return missing;
}

/** The argv to exec this same program with: the compiled binary takes its arguments directly, `bun main.ts` its flags and script first. */
export function reexecArgv(execPath: string, argv: readonly string[], execArgv: readonly string[], compiled: boolean): string[] {
  return compiled ? [execPath, ...argv.slice(2)] : [execPath, ...execArgv, ...argv.slice(1)];
}

/**
 * Re-execute this process with the allocator settings it lacks. Returns only
 * when nothing was missing, when it already ran, or when the exec could not
 * happen (not Linux, no glibc, exec refused).
 */
export async function ensureAllocatorEnv(): Promise<void> {
  if (process.platform !== "linux" || process.env[allocatorEnvMarker] !== undefined) return;
  const missing = missingAllocatorEnv(process.env);
  if (Object.keys(missing).length === 0) return;
  let ffi: typeof import("bun:ffi");
  let execve: (path: number, argv: number, envp: number) => number;
  try {
    ffi = await import("bun:ffi");
    const libc = ffi.dlopen("libc.so.6", { execve: { args: [ffi.FFIType.ptr, ffi.FFIType.ptr, ffi.FFIType.ptr], returns: ffi.FFIType.i32 } });
    execve = libc.symbols.execve as unknown as typeof execve;
  } catch {
    return;
  }
  const compiled = Bun.main.startsWith("/$bunfs/");
  const argv = reexecArgv(process.execPath, process.argv, process.execArgv, compiled);
  const env = { ...process.env, ...missing, [allocatorEnvMarker]: "1" };
  // Every C string stays referenced until execve returns (it only returns on failure).
  const strings: Buffer[] = [];
  const cString = (value: string): number => {
    const bytes = Buffer.from(`${value}\0`);
    strings.push(bytes);
    return ffi.ptr(bytes);
  };
  const table = (values: string[]): BigUint64Array => {
    const pointers = new BigUint64Array(values.length + 1);
    values.forEach((value, index) => (pointers[index] = BigInt(cString(value))));
    return pointers;
  };
  const argvTable = table(argv);
  const envTable = table(Object.entries(env).map(([name, value]) => `${name}=${value ?? ""}`));
  execve(cString(process.execPath), ffi.ptr(argvTable), ffi.ptr(envTable));
  // Only reached when the exec failed: carry on with the environment as given.
  strings.length = 0;
}
