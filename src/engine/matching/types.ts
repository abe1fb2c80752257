// The normalized shapes matching works on: an item's validated `requires`
// (a Requires), a worker's validated `capabilities` (Capabilities), and the
// result type of the two parsers, whose failures say where in the map they
// lie (a MapPath). Both shapes carry a canonical `key` string, so equal
// requirements share one signature and equal capability sets share one
// worker kind. See docs/MATCHING.md for the semantics.

import type { FailureKind } from "../failures/failure-kind.ts";

/** A value a feature may hold or be compared with. Numbers are finite; -0 is stored as 0. */
export type Scalar = string | number | boolean;

/** A closed or open interval on numbers; an absent bound is -Infinity / +Infinity (inclusive flag false). */
export interface Range {
  readonly min: number;
  readonly minInclusive: boolean;
  readonly max: number;
  readonly maxInclusive: boolean;
}

/**
 * Everything one `requires` entry demands of one feature; every non-null part
 * must hold. The bare scalar form `v` and a one-value `{in: [v]}` are folded
 * into `allOf` (each means "equals, or contains, v"), so equivalent
 * requirements share a signature.
 */
export interface FeatureConstraint {
  readonly feature: string;
  /** The feature contains every one of these (sorted, deduplicated). */
  readonly allOf: readonly Scalar[] | null;
  /** The feature shares at least one value with these (2 or more, sorted, deduplicated). */
  readonly anyOf: readonly Scalar[] | null;
  /** Some one numeric element lies in this range. */
  readonly range: Range | null;
  /** The feature does not equal / contain this value (holds when absent). */
  readonly notEqual: Scalar | null;
  /** `exists: true` / `exists: false`; null when not given. */
  readonly exists: boolean | null;
  /** True when a worker lacking the feature fails this constraint: every form but `ne` and `exists: false`. */
  readonly needsFeature: boolean;
}

/** A validated, non-empty `requires` map, constraints sorted by feature name. */
export interface Requires {
  readonly constraints: readonly FeatureConstraint[];
  /** Canonical text of the constraints: equal keys mean equal requirements. */
  readonly key: string;
}

/**
 * A validated, non-empty `capabilities` map. Every feature is held as a
 * sorted, deduplicated set; a scalar is a set of one (the contract's rules
 * give a scalar and a one-element set the same meaning).
 */
export interface Capabilities {
  readonly features: ReadonlyMap<string, readonly Scalar[]>;
  /** Canonical text of the features: equal keys mean equal capabilities. */
  readonly key: string;
}

/**
 * Where in a `requires` or `capabilities` map a parse failed: the map itself
 * (all null), one feature, one operator of its constraint (requires only),
 * and a position in that feature's value list. The caller says which map of
 * which request this is (engine/failures/failure-location.ts).
 */
export interface MapPath {
  readonly feature: string | null;
  readonly operator: string | null;
  readonly position: number | null;
}

/** The map as a whole. */
export const wholeMap: MapPath = Object.freeze({ feature: null, operator: null, position: null });

/** A feature of the map, or an operator of its constraint, or a position in its value list. Made only for a failure. */
export function pathIn(feature: string, operator: string | null = null, position: number | null = null): MapPath {
  return { feature, operator, position };
}

export type ParseResult<T> =
  | { ok: true; value: T }
  | { ok: false; kind: Extract<FailureKind, "invalid_value" | "over_limit">; at: MapPath; message: string };
