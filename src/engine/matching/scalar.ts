// Scalars as matching sees them: validation of one decoded value, the total
// order used to sort sets canonically, membership in a sorted set, and the
// bounds on feature names and string values (defined in src/limits.ts).
// Shared by both parsers and by satisfies().

import { featureNameBytesMax, stringValueBytesMax } from "../../limits.ts";
import type { Scalar } from "./types.ts";

export { featureNameBytesMax, stringValueBytesMax };

/** Why a decoded value is not a usable scalar, or null when it is one. */
export type ScalarProblem = "type" | "not_finite" | "too_long" | null;

export function scalarProblem(value: unknown): ScalarProblem {
  switch (typeof value) {
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : "not_finite";
    case "string":
      return utf8BytesOver(value, stringValueBytesMax) ? "too_long" : null;
    default:
      return "type";
  }
}

/** -0 becomes 0 so that it equals 0 in sets and in signature keys. */
export function normalizeScalar(value: Scalar): Scalar {
  return value === 0 ? 0 : value;
}

/** True when `text` takes more than `bytesMax` bytes as UTF-8. */
export function utf8BytesOver(text: string, bytesMax: number): boolean {
  // A UTF-16 code unit takes at most 3 UTF-8 bytes: short strings need no count.
  if (text.length * 3 <= bytesMax) return false;
  if (text.length > bytesMax) return true;
  return Buffer.byteLength(text, "utf8") > bytesMax;
}

function typeRank(value: Scalar): number {
  return typeof value === "boolean" ? 0 : typeof value === "number" ? 1 : 2;
}

/** Total order: booleans (false, true) < numbers (by value) < strings (by code unit). */
function compareScalars(a: Scalar, b: Scalar): number {
  const rankA = typeRank(a);
  const rankB = typeRank(b);
  if (rankA !== rankB) return rankA - rankB;
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/** Sorts in place by compareScalars and drops duplicates; returns the same array. */
export function sortUnique(values: Scalar[]): Scalar[] {
  values.sort(compareScalars);
  let kept = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as Scalar;
    if (kept === 0 || values[kept - 1] !== value) values[kept++] = value;
  }
  values.length = kept;
  return values;
}

/** Membership in a set sorted by compareScalars. Strict equality: "8" != 8, true != 1, 8 == 8.0. */
export function setHas(sorted: readonly Scalar[], value: Scalar): boolean {
  if (sorted.length <= 16) return sorted.includes(value);
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const order = compareScalars(sorted[middle] as Scalar, value);
    if (order === 0) return true;
    if (order < 0) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}

/** A plain decoded MessagePack map (not an array, bin, or class instance). */
export function isPlainMap(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
