// Validation and normalization of an item's `requires` map into a Requires:
// every constraint form of the contract, its value types, its count limits,
// and the canonical key that makes equal requirements share one signature.
// Errors say where in the map they lie (a MapPath: feature `gpu`, operator
// `in`, position 2); the server renders that as `items[3].requires.gpu.in[2]`.

import { type Limits, stringValueBytesMax } from "../../limits.ts";
import {
  featureNameBytesMax,
  isPlainMap,
  normalizeScalar,
  scalarProblem,
  sortUnique,
  utf8BytesOver,
} from "./scalar.ts";
import { type FeatureConstraint, type MapPath, type ParseResult, pathIn, type Range, type Requires, type Scalar, wholeMap } from "./types.ts";

type Failure = Extract<ParseResult<never>, { ok: false }>;

export function badRequest(at: MapPath, message: string): Failure {
  return { ok: false, kind: "invalid_value", at, message };
}

export function tooLarge(at: MapPath, message: string): Failure {
  return { ok: false, kind: "over_limit", at, message };
}

const operators = new Set(["in", "all", "gte", "gt", "lte", "lt", "ne", "exists"]);

/** Checks one scalar operand (of `feature`, under `operator`, at `position` in a list); returns a failure or null. */
function checkScalar(value: unknown, feature: string, operator: string | null, position: number | null): Failure | null {
  switch (scalarProblem(value)) {
    case null:
      return null;
    case "not_finite":
      return badRequest(pathIn(feature, operator, position), "numbers must be finite (no NaN or Infinity)");
    case "too_long":
      return tooLarge(pathIn(feature, operator, position), `string values are at most ${stringValueBytesMax} UTF-8 bytes`);
    case "type":
      return badRequest(pathIn(feature, operator, position), "must be a string, number or boolean");
  }
}

/** Checks an `in` / `all` list and returns its sorted, deduplicated values. */
function parseValueList(raw: unknown, feature: string, operator: string, limits: Limits): ParseResult<Scalar[]> {
  if (!Array.isArray(raw)) return badRequest(pathIn(feature, operator), "must be an array of strings, numbers or booleans");
  if (raw.length === 0) return badRequest(pathIn(feature, operator), "must hold at least one value");
  if (raw.length > limits.valuesPerFeatureMax) {
    return tooLarge(pathIn(feature, operator), `holds ${raw.length} values; the limit is ${limits.valuesPerFeatureMax}`);
  }
  const values: Scalar[] = new Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const failure = checkScalar(raw[i], feature, operator, i);
    if (failure !== null) return failure;
    values[i] = normalizeScalar(raw[i] as Scalar);
  }
  return { ok: true, value: sortUnique(values) };
}

interface RangeBuilder {
  min: number;
  minInclusive: boolean;
  max: number;
  maxInclusive: boolean;
  given: boolean;
}

/** Tightens the range with one bound; two lower bounds (gte and gt) keep the stricter. */
function addBound(range: RangeBuilder, operator: string, bound: number): void {
  range.given = true;
  if (operator === "gte" || operator === "gt") {
    const inclusive = operator === "gte";
    if (bound > range.min || (bound === range.min && !inclusive)) {
      range.min = bound;
      range.minInclusive = inclusive;
    }
  } else {
    const inclusive = operator === "lte";
    if (bound < range.max || (bound === range.max && !inclusive)) {
      range.max = bound;
      range.maxInclusive = inclusive;
    }
  }
}

function rangeIsEmpty(range: Range): boolean {
  if (range.min > range.max) return true;
  return range.min === range.max && !(range.minInclusive && range.maxInclusive);
}

/** Parses one feature's constraint: a bare scalar or an operator map. */
export function parseConstraint(feature: string, raw: unknown, limits: Limits): ParseResult<FeatureConstraint> {
  if (!isPlainMap(raw)) {
    if (Array.isArray(raw)) {
      return badRequest(pathIn(feature), "a constraint is a value or an operator map; for a list use {in: [...]} or {all: [...]}");
    }
    const failure = checkScalar(raw, feature, null, null);
    if (failure !== null) return failure;
    const value = normalizeScalar(raw as Scalar);
    return {
      ok: true,
      value: { feature, allOf: [value], anyOf: null, range: null, notEqual: null, exists: null, needsFeature: true },
    };
  }
  let allOf: Scalar[] | null = null;
  let anyOf: Scalar[] | null = null;
  let notEqual: Scalar | null = null;
  let exists: boolean | null = null;
  const range: RangeBuilder = { min: -Infinity, minInclusive: false, max: Infinity, maxInclusive: false, given: false };
  let operatorCount = 0;
  for (const operator of Object.keys(raw)) {
    const operand = raw[operator];
    if (!operators.has(operator)) {
      return badRequest(pathIn(feature, operator), `unknown operator "${operator}"; use in, all, gte, gt, lte, lt, ne or exists`);
    }
    if (operand === null || operand === undefined) continue; // nil counts as absent
    operatorCount++;
    switch (operator) {
      case "in":
      case "all": {
        const list = parseValueList(operand, feature, operator, limits);
        if (!list.ok) return list;
        if (operator === "all") allOf = list.value;
        else anyOf = list.value;
        break;
      }
      case "gte":
      case "gt":
      case "lte":
      case "lt": {
        if (typeof operand !== "number") return badRequest(pathIn(feature, operator), "a range bound must be a number");
        if (!Number.isFinite(operand)) return badRequest(pathIn(feature, operator), "numbers must be finite (no NaN or Infinity)");
        addBound(range, operator, operand === 0 ? 0 : operand);
        break;
      }
      case "ne": {
        const failure = checkScalar(operand, feature, operator, null);
        if (failure !== null) return failure;
        notEqual = normalizeScalar(operand as Scalar);
        break;
      }
      case "exists": {
        if (typeof operand !== "boolean") return badRequest(pathIn(feature, operator), "must be true or false");
        exists = operand;
        break;
      }
    }
  }
  if (operatorCount === 0) return badRequest(pathIn(feature), "an operator map needs at least one operator");
  // A one-value `in` means the same as `all` of that value: fold it so the two share a signature.
  if (anyOf !== null && anyOf.length === 1) {
    allOf = sortUnique([...(allOf ?? []), anyOf[0] as Scalar]);
    anyOf = null;
  }
  const finalRange: Range | null = range.given
    ? { min: range.min, minInclusive: range.minInclusive, max: range.max, maxInclusive: range.maxInclusive }
    : null;
  if (finalRange !== null && rangeIsEmpty(finalRange)) {
    return badRequest(pathIn(feature), "the range holds for no number, so no worker could ever take the item");
  }
  const needsFeature = allOf !== null || anyOf !== null || finalRange !== null || exists === true;
  if (exists === false && needsFeature) {
    return badRequest(pathIn(feature), "exists: false cannot be combined with in, all or a range: no worker could ever take the item");
  }
  return { ok: true, value: { feature, allOf, anyOf, range: finalRange, notEqual, exists, needsFeature } };
}

/** Canonical text of a constraint list already sorted by feature. */
export function requiresKey(constraints: readonly FeatureConstraint[]): string {
  const parts = new Array(constraints.length);
  for (let i = 0; i < constraints.length; i++) {
    const c = constraints[i] as FeatureConstraint;
    const range = c.range === null ? null : [c.range.min, c.range.minInclusive, c.range.max, c.range.maxInclusive];
    // JSON keeps strings, numbers and booleans apart; Infinity bounds print as null, which no finite bound does.
    parts[i] = [c.feature, c.allOf, c.anyOf, range, c.notEqual, c.exists];
  }
  return JSON.stringify(parts);
}

/**
 * Validates a raw `requires` value. Absent, nil, or a map with no non-nil
 * entries gives null (the item has no requirements). A failure's MapPath is
 * relative to the map: the caller knows which item's map it is.
 */
export function parseRequires(raw: unknown, limits: Limits): ParseResult<Requires | null> {
  if (raw === null || raw === undefined) return { ok: true, value: null };
  if (!isPlainMap(raw)) return badRequest(wholeMap, "must be a map from feature name to constraint");
  const features = Object.keys(raw);
  let present = 0;
  for (const feature of features) {
    if (raw[feature] !== null && raw[feature] !== undefined) present++;
  }
  if (present > limits.featuresMax) {
    return tooLarge(wholeMap, `names ${present} features; the limit is ${limits.featuresMax}`);
  }
  features.sort();
  const constraints: FeatureConstraint[] = [];
  for (const feature of features) {
    if (feature.length === 0) return badRequest(pathIn(feature), "feature names must not be empty");
    if (utf8BytesOver(feature, featureNameBytesMax)) return tooLarge(pathIn(feature), `feature names are at most ${featureNameBytesMax} UTF-8 bytes`);
    const value = raw[feature];
    if (value === null || value === undefined) continue;
    const parsed = parseConstraint(feature, value, limits);
    if (!parsed.ok) return parsed;
    constraints.push(parsed.value);
  }
  if (constraints.length === 0) return { ok: true, value: null };
  return { ok: true, value: { constraints, key: requiresKey(constraints) } };
}
