// Validation and normalization of a dequeue's `capabilities` map into
// Capabilities: each feature a sorted, deduplicated set, plus the canonical key
// that maps equal capability sets to one worker kind. This runs on every
// dequeue that sends capabilities, and almost every time the kind is already
// known, so it only validates and builds the key; the feature map the
// matching rule reads is built on first use (when a new kind is evaluated).

import { type Limits, stringValueBytesMax } from "../../limits.ts";
import {
  featureNameBytesMax,
  isPlainMap,
  normalizeScalar,
  scalarProblem,
  sortUnique,
  utf8BytesOver,
} from "./scalar.ts";
import { type Capabilities, type ParseResult, pathIn, type Scalar, wholeMap } from "./types.ts";
import { FrozenParseMemo } from "./frozen-parse-memo.ts";

type Failure = Extract<ParseResult<never>, { ok: false }>;

/** A value of feature `name` (at `position` in its list, or null for a bare scalar) that is not a usable scalar, or null. */
function valueFailure(value: unknown, name: string, position: number | null): Failure | null {
  switch (scalarProblem(value)) {
    case null:
      return null;
    case "not_finite":
      return { ok: false, kind: "invalid_value", at: pathIn(name, null, position), message: "numbers must be finite (no NaN or Infinity)" };
    case "too_long":
      return { ok: false, kind: "over_limit", at: pathIn(name, null, position), message: `string values are at most ${stringValueBytesMax} UTF-8 bytes` };
    case "type":
      return { ok: false, kind: "invalid_value", at: pathIn(name, null, position), message: "must be a string, number, boolean or an array of those" };
  }
}

/**
 * One value's part of a canonical key. Strings carry their length, so no
 * separator inside a string can be mistaken for structure; numbers print in
 * their shortest form (8 and 8.0 alike).
 */
function scalarKey(value: Scalar): string {
  if (typeof value === "string") return `s${value.length}:${value}`;
  if (typeof value === "number") return `n${value};`;
  return value ? "t" : "f";
}

/** Parsed capabilities; the feature map is built on first read. */
class ParsedCapabilities implements Capabilities {
  private built: Map<string, readonly Scalar[]> | null = null;
  constructor(
    readonly key: string,
    private readonly names: string[],
    private readonly sets: Array<readonly Scalar[]>,
  ) {}

  get features(): ReadonlyMap<string, readonly Scalar[]> {
    if (this.built === null) {
      this.built = new Map();
      for (let i = 0; i < this.names.length; i++) this.built.set(this.names[i] as string, this.sets[i] as readonly Scalar[]);
    }
    return this.built;
  }
}

/**
 * Validates a raw `capabilities` value. Absent, nil, or a map with no non-nil
 * entries gives null (the worker matches only items without requirements). An
 * empty array is a present feature holding no values. A failure's MapPath is
 * relative to the map.
 */
export function parseCapabilities(raw: unknown, limits: Limits): ParseResult<Capabilities | null> {
  if (raw === null || raw === undefined) return { ok: true, value: null };
  if (!isPlainMap(raw)) {
    return { ok: false, kind: "invalid_value", at: wholeMap, message: "must be a map from feature name to value or set" };
  }
  const names = Object.keys(raw);
  let sorted = true;
  let present = 0;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (raw[name] !== null && raw[name] !== undefined) present++;
    if (i > 0 && (names[i - 1] as string) > name) sorted = false;
  }
  if (present > limits.featuresMax) {
    return {
      ok: false,
      kind: "over_limit",
      at: wholeMap,
      message: `names ${present} features; the limit is ${limits.featuresMax}`,
    };
  }
  if (!sorted) names.sort();
  const keptNames: string[] = [];
  const sets: Array<readonly Scalar[]> = [];
  let key = "";
  for (const name of names) {
    if (name.length === 0) return { ok: false, kind: "invalid_value", at: pathIn(name), message: "feature names must not be empty" };
    if (utf8BytesOver(name, featureNameBytesMax)) {
      return { ok: false, kind: "over_limit", at: pathIn(name), message: `feature names are at most ${featureNameBytesMax} UTF-8 bytes` };
    }
    const value = raw[name];
    if (value === null || value === undefined) continue;
    let set: Scalar[];
    if (Array.isArray(value)) {
      if (value.length > limits.valuesPerFeatureMax) {
        return { ok: false, kind: "over_limit", at: pathIn(name), message: `holds ${value.length} values; the limit is ${limits.valuesPerFeatureMax}` };
      }
      set = new Array(value.length);
      for (let i = 0; i < value.length; i++) {
        const failure = valueFailure(value[i], name, i);
        if (failure !== null) return failure;
        set[i] = normalizeScalar(value[i] as Scalar);
      }
      sortUnique(set);
    } else {
      if (scalarProblem(value) !== null) return valueFailure(value, name, null) as Failure;
      set = [normalizeScalar(value as Scalar)];
    }
    key += `${name.length}:${name}[`;
    for (let i = 0; i < set.length; i++) key += scalarKey(set[i] as Scalar);
    key += "]";
    keptNames.push(name);
    sets.push(set);
  }
  if (keptNames.length === 0) return { ok: true, value: null };
  return { ok: true, value: new ParsedCapabilities(key, keptNames, sets) };
}

/** parseCapabilities, remembered for frozen maps (frozen-parse-memo.ts): a worker sends the same capabilities on every dequeue. */
export class CapabilitiesParser {
  private readonly memo: FrozenParseMemo<Capabilities | null>;

  constructor(limits: Limits) {
    this.memo = new FrozenParseMemo((raw) => parseCapabilities(raw, limits));
  }

  parse(raw: Record<string, unknown>): ParseResult<Capabilities | null> {
    return this.memo.of(raw);
  }
}
