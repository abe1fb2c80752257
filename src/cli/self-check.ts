// Start-up check that LMDB's native addon is loaded and usable, so a broken
// install or standalone binary fails at once with a message an operator can
// act on, instead of with a stack trace from deep inside the storage layer.
//
// lmdb is imported statically, the same module instance the store uses: a
// `require("lmdb")` here would load lmdb's separate CommonJS build, a second
// copy of the library in the process. If the addon cannot be loaded at all,
// the import itself throws during module evaluation, before any of our code
// runs: in the standalone binary scripts/build.ts wraps the loader so that
// error already says what to fix ($TMPDIR writable and not noexec), and Bun
// exits 1. This check then catches the quieter failures: a binding that loaded
// but is incomplete or uninitialised.

import * as lmdb from "lmdb";

export type NativeAddonCheck = { ok: true } | { ok: false; message: string };

/** The parts of lmdb's native binding every store operation goes through. */
const requiredConstructors = ["Env", "Txn", "Dbi", "Cursor"] as const;

interface NativeBinding {
  version?: { major?: unknown; minor?: unknown; patch?: unknown };
  [name: string]: unknown;
}

export function checkNativeAddons(): NativeAddonCheck {
  // lmdb's Node/Bun entry exports its binding, but its typings do not declare it.
  return checkNativeBinding((lmdb as unknown as { nativeAddon?: unknown }).nativeAddon);
}

/** The checks themselves, on any value, so tests can hand it broken bindings. */
export function checkNativeBinding(candidate: unknown): NativeAddonCheck {
  if (typeof candidate !== "object" || candidate === null) {
    return { ok: false, message: "orq: the lmdb package loaded but exports no native binding (nativeAddon)." };
  }
  const binding = candidate as NativeBinding;
  const missing = requiredConstructors.filter((name) => typeof binding[name] !== "function");
  if (missing.length > 0) {
    return {
      ok: false,
      message: `orq: LMDB's native binding is incomplete (missing ${missing.join(", ")}); the addon and the lmdb package do not match.`,
    };
  }
  const version = binding.version;
  if (typeof version !== "object" || version === null || typeof version.major !== "number" || typeof version.minor !== "number") {
    return { ok: false, message: "orq: LMDB's native binding reports no version; the addon did not initialise." };
  }
  return { ok: true };
}
