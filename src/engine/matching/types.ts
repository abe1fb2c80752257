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

/** One `prefers` entry: a constraint (the `requires` language) and its weight (1..1000). */
export interface WeightedConstraint {
  readonly constraint: FeatureConstraint;
  readonly weight: number;
}

/** A validated, non-empty `prefers` map, entries sorted by feature name. */
export interface Prefers {
  readonly entries: readonly WeightedConstraint[];
  /** The sum of the weights: a worker whose fit equals it fits fully. */
  readonly totalWeight: number;
  /** Canonical text of the entries, weights included. */
  readonly key: string;
}

/**
 * What a signature adds to `requires` for an item with `prefers`: the
 * preferences, the wait, and whether this is the held variant (the item's
 * first prefer_wait_ms as ready, when only full-fit workers may take it).
 * Each preference has exactly one counterpart of the other variant, made on
 * first use, so an item switches between the two without parsing anything.
 */
export class Preference {
  private counterpart: Preference | null = null;
  private keyText: string | null = null;
  /** The last signature key built with this preference, and the requires it was built for. */
  private signatureKeyText = "";
  private signatureKeyRequires: Requires | null | undefined = undefined;
  constructor(
    readonly prefers: Prefers,
    readonly preferWaitMs: number,
    readonly held: boolean,
  ) {}

  /** Canonical text: equal keys mean equal preferences (and variant). */
  get key(): string {
    this.keyText ??= `${this.prefers.key}/${this.preferWaitMs}${this.held ? "/held" : ""}`;
    return this.keyText;
  }

  /** The signature key of `requires` with this preference (registry.ts), built once per requires in a row. */
  signatureKey(requires: Requires | null): string {
    if (this.signatureKeyRequires !== requires) {
      this.signatureKeyText = `${requires?.key ?? ""}\u0001${this.key}`;
      this.signatureKeyRequires = requires;
    }
    return this.signatureKeyText;
  }

  /** The same preference, held or not. */
  variant(held: boolean): Preference {
    if (held === this.held) return this;
    let other = this.counterpart;
    if (other === null) {
      other = new Preference(this.prefers, this.preferWaitMs, held);
      other.counterpart = this;
      this.counterpart = other;
    }
    return other;
  }
}
