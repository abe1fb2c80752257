// The public surface of matching: parse an item's `requires` and a worker's
// `capabilities`, decide whether one satisfies the other, and the cached,
// indexed form the engine uses on its hot path (signatures and worker kinds).
// docs/MATCHING.md explains the semantics and the design.

export type { Capabilities, FeatureConstraint, MapPath, Requires, Scalar } from "./types.ts";
export { Preference } from "./types.ts";
export { parseRequires } from "./parse-requires.ts";
export { parsePrefers } from "./parse-prefers.ts";
export { CapabilitiesParser, parseCapabilities } from "./parse-capabilities.ts";
export { constraintHolds, satisfies } from "./satisfies.ts";
export { type ReadonlySignatureRegistry, SignatureRegistry, signatureRegistryFull } from "./signature-registry.ts";
export { Matcher } from "./matcher.ts";
export { featureNameBytesMax, stringValueBytesMax } from "./scalar.ts";
export { TopsHeap } from "./tops-heap.ts";
export { TopsByKind, type KindSource } from "./tops-by-kind.ts";
