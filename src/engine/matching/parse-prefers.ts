// Validation and normalization of an item's `prefers` map into a Prefers: the
// `requires` language (parse-requires.ts checks each constraint), plus an
// optional `weight` in a constraint object (1..preferWeightMax; a bare scalar
// weighs 1). Equal preferences, weights included, share one canonical key.

import { type Limits, preferWeightMax } from "../../limits.ts";
import { badRequest, parseConstraint, requiresKey, tooLarge } from "./parse-requires.ts";
import { featureNameBytesMax, isPlainMap, utf8BytesOver } from "./scalar.ts";
import { type FeatureConstraint, type ParseResult, pathIn, type Prefers, type WeightedConstraint, wholeMap } from "./types.ts";

/** Validates a raw `prefers` value: absent, nil or a map with no non-nil entries gives null. */
export function parsePrefers(raw: unknown, limits: Limits): ParseResult<Prefers | null> {
  if (raw === null || raw === undefined) return { ok: true, value: null };
  if (!isPlainMap(raw)) return badRequest(wholeMap, "must be a map from feature name to constraint");
  const features = Object.keys(raw).filter((feature) => raw[feature] !== null && raw[feature] !== undefined);
  if (features.length > limits.featuresMax) return tooLarge(wholeMap, `names ${features.length} features; the limit is ${limits.featuresMax}`);
  features.sort();
  const entries: WeightedConstraint[] = [];
  let totalWeight = 0;
  for (const feature of features) {
    if (feature.length === 0) return badRequest(pathIn(feature), "feature names must not be empty");
    if (utf8BytesOver(feature, featureNameBytesMax)) return tooLarge(pathIn(feature), `feature names are at most ${featureNameBytesMax} UTF-8 bytes`);
    let value = raw[feature];
    let weight = 1;
    if (isPlainMap(value) && "weight" in value && value.weight !== null && value.weight !== undefined) {
      const given = value.weight;
      if (typeof given !== "number" || !Number.isInteger(given) || given < 1 || given > preferWeightMax) {
        return badRequest(pathIn(feature, "weight"), `must be an integer from 1 to ${preferWeightMax}`);
      }
      weight = given;
      const { weight: _weight, ...rest } = value;
      value = rest;
    }
    const parsed = parseConstraint(feature, value, limits);
    if (!parsed.ok) return parsed;
    entries.push({ constraint: parsed.value, weight });
    totalWeight += weight;
  }
  if (entries.length === 0) return { ok: true, value: null };
  const constraints: FeatureConstraint[] = entries.map((entry) => entry.constraint);
  const key = `${requiresKey(constraints)}#${entries.map((entry) => entry.weight).join(",")}`;
  return { ok: true, value: { entries, totalWeight, key } };
}
