// The contract's matching rule, evaluated directly: does a worker with these
// capabilities meet every constraint of these requirements? The Matcher caches
// this per (worker kind, signature); this file is the reference it is tested
// against, so it favours plainness over speed.

import { setHas } from "./scalar.ts";
import type { Capabilities, FeatureConstraint, Range, Scalar } from "./types.ts";

function inRange(value: Scalar, range: Range): boolean {
  // Booleans and strings are not numbers: they are never in a range.
  if (typeof value !== "number") return false;
  if (value < range.min || (value === range.min && !range.minInclusive)) return false;
  if (value > range.max || (value === range.max && !range.maxInclusive)) return false;
  return true;
}

/** One feature's constraint against the worker's set for it (undefined when absent). */
export function constraintHolds(constraint: FeatureConstraint, values: readonly Scalar[] | undefined): boolean {
  if (values === undefined) return !constraint.needsFeature;
  if (constraint.exists === false) return false;
  if (constraint.allOf !== null) {
    for (const wanted of constraint.allOf) if (!setHas(values, wanted)) return false;
  }
  if (constraint.anyOf !== null) {
    let shared = false;
    for (const offered of values) {
      if (setHas(constraint.anyOf, offered)) {
        shared = true;
        break;
      }
    }
    if (!shared) return false;
  }
  if (constraint.range !== null) {
    // One element must satisfy every bound of the object at once.
    let found = false;
    for (const value of values) {
      if (inRange(value, constraint.range)) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  if (constraint.notEqual !== null && setHas(values, constraint.notEqual)) return false;
  return true;
}

/**
 * True when `caps` meets every constraint of `requires`. A worker without
 * capabilities (null) matches only items without requirements, even ones whose
 * constraints would hold for an absent feature (`ne`, `exists: false`): the
 * contract says so explicitly.
 */
export function satisfies(requires: { readonly constraints: readonly FeatureConstraint[] }, caps: Capabilities | null): boolean {
  if (requires.constraints.length === 0) return true;
  if (caps === null || caps.features.size === 0) return false;
  for (const constraint of requires.constraints) {
    if (!constraintHolds(constraint, caps.features.get(constraint.feature))) return false;
  }
  return true;
}
