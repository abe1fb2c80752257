// The allocator settings `orq serve` runs with (allocatorEnv in
// src/limits/memory.ts). Bun's allocator (mimalloc) reads its options from
// the environment once, when the process starts, so the server sets them by
// re-executing itself (`process.execve`: same PID, same arguments, same open
// descriptors) with them added, before it opens anything.
//
// An operator who sets a variable keeps their value (MIMALLOC_PURGE_DELAY=100
// restores mimalloc's default). Linux only (the argv comes from
// /proc/self/cmdline); elsewhere, or if the exec fails, the server runs with
// the environment it was given.

import { readFileSync } from "node:fs";
import { allocatorEnv } from "../limits.ts";

/** Set in the re-executed process, so it never loops (and tests can see that it ran). */
export const allocatorEnvMarker = "ORQ_ALLOCATOR_ENV_SET";

/** The variables to add: those of `wanted` the environment does not set already. */
export function missingAllocatorEnv(env: NodeJS.ProcessEnv, wanted: Readonly<Record<string, string>> = allocatorEnv): Record<string, string> {
  const missing: Record<string, string> = {};
  for (const [name, value] of Object.entries(wanted)) if (env[name] === undefined) missing[name] = value;
  return missing;
}

/** The NUL-separated argv of /proc/self/cmdline: exactly what this process was started with (runtime flags and all). */
export function parseCmdline(cmdline: string): string[] {
  const argv = cmdline.split("\0");
  if (argv[argv.length - 1] === "") argv.pop();
  return argv;
}

/**
 * Re-execute this process with the allocator settings it lacks. Returns only
 * when nothing was missing, when it already ran, or when the exec could not
 * happen (not Linux, no `process.execve`, exec refused).
 */
export function ensureAllocatorEnv(): void {
  if (process.platform !== "linux" || process.env[allocatorEnvMarker] !== undefined || typeof process.execve !== "function") return;
  const missing = missingAllocatorEnv(process.env);
  if (Object.keys(missing).length === 0) return;
  let argv: string[];
  try {
    argv = parseCmdline(readFileSync("/proc/self/cmdline", "latin1"));
  } catch {
    return;
  }
  if (argv.length === 0) return;
  const env: Record<string, string> = { [allocatorEnvMarker]: "1" };
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  Object.assign(env, missing);
  try {
    // /proc/self/exe: the binary this process runs (bun, or the compiled orq), whatever argv[0] says.
    process.execve("/proc/self/exe", argv, env);
  } catch {
    // Only reached when the exec failed: carry on with the environment as given.
  }
}
