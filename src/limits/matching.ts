// Matching (src/engine/matching/, docs/MATCHING.md): defaults of the matcher's
// own bounds, and the per-topic caches and reports built on it. They are not
// per-server settings (no flag sets them); tests and benches pass smaller ones
// to the constructors. Part of src/limits.ts, which re-exports it.

/**
 * Feature names and string values in `requires` and `capabilities` are at
 * most 255 UTF-8 bytes, like topic names: they are map keys and parts of
 * signature keys held in memory.
 */
export const featureNameBytesMax = 255;
export const stringValueBytesMax = 255;

/**
 * Live distinct signatures (65,536): each costs a byte in every worker kind's
 * verdict array, so 256 kinds x 65,536 signatures bound the cache at 16 MiB.
 * A production fleet has tens to hundreds; more means requirements are being
 * generated per item (e.g. a random range bound), which defeats matching.
 */
export const signaturesMaxDefault = 65_536;

/**
 * Cached worker kinds (256): a fleet rarely has more than tens of distinct
 * capability sets; each kind costs up to one byte per signature id.
 */
export const workerKindsMaxDefault = 256;

/**
 * Eligibility classes per topic (32, one bit each in a slot's mask): a slot
 * that gets a better item costs one sift per class that may take it, so the
 * bound is also a bound on that cost. Fleets have tens of kinds, and kinds
 * with equal verdicts on a topic's groups share a class.
 */
export const eligibleClassesMaxDefault = 32;

/**
 * Picks of a topic (4,096) a class must go unused before a new class may
 * replace it when all are taken: replacing costs a rebuild (a pass over the
 * topic's slots), so classes in steady use are not churned.
 */
export const classIdlePicksMinDefault = 4096;

/**
 * Per-kind eligible-group counts cached per topic (64 kinds), for kinds
 * without an eligibility class: a fleet has tens of kinds; past this the
 * cache is cleared (evicted kinds leave stale entries, and a kind id is never
 * reused).
 */
export const eligibleCacheKindsMax = 64;

/** Kind -> class mappings remembered per topic (64); past that they are forgotten and re-derived. */
export const kindMappingsMax = 64;

/**
 * Worker kinds remembered per topic for the unmatchable-items report (64):
 * fleets have tens of kinds, and at stats time each costs one verdict per
 * signature group of the topic.
 */
export const askersPerTopicMax = 64;

/** Signatures listed per topic in the unmatchable-items report (20), most items first: enough to point at the problem without a huge reply. */
export const unmatchableSignaturesListedMax = 20;

/** Stuck signatures listed per topic on the dashboard's matching view (50): enough to see every distinct problem on one page. */
export const stuckSignaturesListedMax = 50;

/**
 * Distinct `capabilities` maps the request decoder keeps decoded (256), by
 * their bytes (protocol/repeated-map-cache.ts): a fleet sends tens of
 * distinct capability sets, each worker the same one on every dequeue, and a
 * hit saves the map's decoding, its copy and its parse (about 30 JS-heap
 * cells per dequeue: docs/decisions/005-request-decoder.md). Past this the
 * oldest entry goes.
 */
export const capabilitiesMapsCachedMax = 256;

/**
 * Longest `capabilities` map the decoder caches, in encoded bytes (512):
 * typical sets are 20-100 bytes; a larger one is decoded each time, so the
 * cache holds at most 256 x 512 bytes of copies plus their decoded maps.
 */
export const capabilitiesMapCachedBytesMax = 512;

/**
 * The largest `weight` of one `prefers` entry (1,000, the contract's range).
 * With at most featuresMax (64) entries a fit is below 64,000 < 2^16, which
 * the class heaps fold into a priority's fraction (tops-by-kind.ts).
 */
export const preferWeightMax = 1000;
