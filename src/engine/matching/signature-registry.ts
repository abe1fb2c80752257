// Signatures: small integer ids for distinct requirements, so the engine can
// group items by what they require and the Matcher can cache verdicts in
// arrays. A signature is an item's `requires` and, for an item with
// `prefers`, its Preference (the preferences, the wait, and whether the item
// is held for full-fit workers now): fit, like eligibility, then depends only
// on the (worker kind, signature) pair. Equal signatures (same canonical key) share an id; ids are
// reference-counted (one reference per live item) and recycled when the last
// item holding one ends, so the id space stays dense and bounded.
//
// The registry also keeps the feature index. A signature "needs" a feature
// when it fails for a worker lacking it (every constraint form but `ne` and
// `exists: false`). Each signature is filed under one needed feature, its
// anchor: the one fewest live signatures needed when it was interned (so
// `pool-17` rather than `os`). A worker can only take signatures anchored on a
// feature it has, or needing none, so the Matcher evaluates a new worker kind
// against those alone: work proportional to the candidates, not to every
// signature.

import { assert } from "../../lib/assert.ts";
import type { Preference, Requires } from "./types.ts";
import { signaturesMaxDefault } from "../../limits.ts";


/** What intern() returns when the registry holds signaturesMax live signatures. */
export const signatureRegistryFull = -1;

export type ReleaseListener = (signatureId: number) => void;

/**
 * What others may read of the registry (ItemStates.registry, the matcher,
 * inspect): signatures, their references and feature index, and release
 * notices (onRelease); interning and releasing stay ItemStates'.
 */
export type ReadonlySignatureRegistry = Pick<
  SignatureRegistry,
  | "signaturesMax"
  | "size"
  | "version"
  | "idCeiling"
  | "requiresOf"
  | "preferenceOf"
  | "preferringCount"
  | "refCountOf"
  | "isLive"
  | "liveIds"
  | "onRelease"
  | "signaturesAnchoredOn"
  | "signaturesNeedingNothing"
  | "anchorFeatureOf"
  | "featureUseOf"
  | "checkInvariants"
>;

export class SignatureRegistry {
  readonly signaturesMax: number;
  private readonly idByKey = new Map<string, number>();
  /** Indexed by id: the canonical key, or null for a free id and for id 0 (no requirements). */
  private readonly keyById: Array<string | null> = [null];
  /** Indexed by id: the requirements (null for none: a signature of preferences alone). */
  private readonly requiresById: Array<Requires | null> = [null];
  /** Indexed by id: the preference, or null. */
  private readonly preferenceById: Array<Preference | null> = [null];
  /** Indexed by id: the live id of its preference's other variant (held or not) once one was asked for, else 0: an item's switch is then two array reads. */
  private readonly variantById: number[] = [0];
  private preferring = 0;
  private readonly refCounts: number[] = [0];
  private readonly freeIds: number[] = [];
  /** Feature -> how many live signatures need it (to choose anchors). */
  private readonly featureUse = new Map<string, number>();
  /** Feature -> the signatures anchored on it. Never empty. */
  private readonly anchored = new Map<string, Set<number>>();
  /** Indexed by id: the anchor feature, or null when the signature needs none (or the id is free). */
  private readonly anchorOf: Array<string | null> = [null];
  private readonly needingNothing = new Set<number>();
  private readonly releaseListeners: ReleaseListener[] = [];
  private liveCount = 0;
  /** Bumped whenever a signature is created or freed, so derived per-kind lists know they are stale. */
  private versionCounter = 0;

  constructor(options: { signaturesMax?: number } = {}) {
    this.signaturesMax = options.signaturesMax ?? signaturesMaxDefault;
    assert(this.signaturesMax >= 1, "signaturesMax must be at least 1");
  }

  /** Live distinct signatures (id 0 not counted). */
  get size(): number {
    return this.liveCount;
  }

  get version(): number {
    return this.versionCounter;
  }

  /** One more than the highest id ever handed out: verdict arrays sized to this cover every live id. */
  get idCeiling(): number {
    return this.keyById.length;
  }

  /** Live signatures with a preference: while 0, fit is 0 everywhere and picks skip it. */
  get preferringCount(): number {
    return this.preferring;
  }

  /**
   * Takes one reference to the signature of `requires` (and `preference`)
   * and returns its id: 0 for neither (not counted), or
   * signatureRegistryFull when a new signature would exceed signaturesMax
   * (the engine refuses the item).
   */
  intern(requires: Requires | null, preference: Preference | null = null): number {
    if (requires === null && preference === null) return 0;
    return this.internKey(requires, preference, false);
  }

  /**
   * Takes one reference to the held (or plain) variant of live signature
   * `id`'s preference, for an item moving between them. Variants do not
   * count against signaturesMax: there is at most one per signature.
   */
  internVariant(id: number, held: boolean): number {
    const linked = this.variantById[id] as number;
    if (linked !== 0) {
      this.refCounts[linked] = (this.refCounts[linked] as number) + 1;
      return linked;
    }
    const preference = this.preferenceById[id];
    if (preference === null || preference === undefined || this.keyById[id] === null) assert(false, `signature ${id} has no preference`);
    const other = this.internKey(this.requiresById[id] ?? null, preference.variant(held), true);
    this.variantById[id] = other;
    this.variantById[other] = id;
    return other;
  }

  private internKey(requires: Requires | null, preference: Preference | null, unbounded: boolean): number {
    const key = preference === null ? (requires as Requires).key : preference.signatureKey(requires);
    const existing = this.idByKey.get(key);
    if (existing !== undefined) {
      this.refCounts[existing] = (this.refCounts[existing] as number) + 1;
      return existing;
    }
    if (!unbounded && this.liveCount >= this.signaturesMax) return signatureRegistryFull;
    let id = this.freeIds.pop();
    if (id === undefined) {
      id = this.keyById.length;
      this.keyById.push(null);
      this.requiresById.push(null);
      this.preferenceById.push(null);
      this.variantById.push(0);
      this.refCounts.push(0);
      this.anchorOf.push(null);
    }
    this.keyById[id] = key;
    this.requiresById[id] = requires;
    this.preferenceById[id] = preference;
    if (preference !== null) this.preferring++;
    this.refCounts[id] = 1;
    this.idByKey.set(key, id);
    this.liveCount++;
    this.versionCounter++;
    this.indexAdd(id, requires);
    return id;
  }

  /** Drops one reference; the last one frees the id (listeners hear of it before it can be reused). */
  release(id: number): void {
    if (id === 0) return;
    const key = this.keyById[id];
    if (key === null || key === undefined) assert(false, `release of unknown signature ${id}`);
    const count = (this.refCounts[id] as number) - 1;
    this.refCounts[id] = count;
    if (count > 0) return;
    this.indexRemove(id, this.requiresById[id] ?? null);
    this.idByKey.delete(key);
    this.keyById[id] = null;
    this.requiresById[id] = null;
    if (this.preferenceById[id] !== null) this.preferring--;
    this.preferenceById[id] = null;
    const other = this.variantById[id] as number;
    if (other !== 0 && this.variantById[other] === id) this.variantById[other] = 0;
    this.variantById[id] = 0;
    this.liveCount--;
    this.versionCounter++;
    for (const listener of this.releaseListeners) listener(id);
    this.freeIds.push(id);
  }

  /** The requirements of a live signature; null for id 0 and for preferences alone. Asserts on a free or unknown id. */
  requiresOf(id: number): Requires | null {
    if (id === 0) return null;
    if (this.keyById[id] === null || this.keyById[id] === undefined) assert(false, `unknown signature ${id}`);
    return this.requiresById[id] as Requires | null;
  }

  /** The preference of a live signature, or null (id 0, or `requires` alone). */
  preferenceOf(id: number): Preference | null {
    return this.preferenceById[id] ?? null;
  }

  refCountOf(id: number): number {
    return this.refCounts[id] ?? 0;
  }

  isLive(id: number): boolean {
    return id === 0 || (this.keyById[id] ?? null) !== null;
  }

  /** Live signature ids, ascending (id 0 excluded). */
  *liveIds(): IterableIterator<number> {
    for (let id = 1; id < this.keyById.length; id++) if (this.keyById[id] !== null) yield id;
  }

  /** Called with each freed id; the Matcher clears its cached verdicts this way. */
  onRelease(listener: ReleaseListener): void {
    this.releaseListeners.push(listener);
  }

  /** Signatures anchored on `feature`: they need it, among others. */
  signaturesAnchoredOn(feature: string): ReadonlySet<number> | undefined {
    return this.anchored.get(feature);
  }

  /** Signatures whose every constraint holds for an absent feature (only `ne` and `exists: false`). */
  signaturesNeedingNothing(): ReadonlySet<number> {
    return this.needingNothing;
  }

  /** The feature signature `id` is filed under, or null when it needs none. */
  anchorFeatureOf(id: number): string | null {
    return this.anchorOf[id] ?? null;
  }

  /** How many live signatures need `feature`. */
  featureUseOf(feature: string): number {
    return this.featureUse.get(feature) ?? 0;
  }

  private indexAdd(id: number, requires: Requires | null): void {
    let anchor: string | null = null;
    let anchorUse = Infinity;
    for (const constraint of requires?.constraints ?? []) {
      if (!constraint.needsFeature) continue;
      const use = this.featureUse.get(constraint.feature) ?? 0;
      if (use < anchorUse) {
        anchor = constraint.feature;
        anchorUse = use;
      }
      this.featureUse.set(constraint.feature, use + 1);
    }
    this.anchorOf[id] = anchor;
    if (anchor === null) {
      this.needingNothing.add(id);
      return;
    }
    let set = this.anchored.get(anchor);
    if (set === undefined) {
      set = new Set();
      this.anchored.set(anchor, set);
    }
    set.add(id);
  }

  private indexRemove(id: number, requires: Requires | null): void {
    for (const constraint of requires?.constraints ?? []) {
      if (!constraint.needsFeature) continue;
      const use = (this.featureUse.get(constraint.feature) ?? 0) - 1;
      assert(use >= 0, "feature use count went negative");
      if (use === 0) this.featureUse.delete(constraint.feature);
      else this.featureUse.set(constraint.feature, use);
    }
    const anchor = this.anchorOf[id] ?? null;
    this.anchorOf[id] = null;
    if (anchor === null) {
      assert(this.needingNothing.delete(id), "needing-nothing set lost a signature");
      return;
    }
    const set = this.anchored.get(anchor);
    assert(set !== undefined && set.delete(id), "feature index lost a signature");
    if (set.size === 0) this.anchored.delete(anchor);
  }

  checkInvariants(): void {
    let live = 0;
    let preferring = 0;
    const useCounts = new Map<string, number>();
    for (let id = 1; id < this.keyById.length; id++) {
      const key = this.keyById[id];
      if (key === null || key === undefined) {
        assert(this.refCounts[id] === 0 && this.requiresById[id] === null && this.preferenceById[id] === null, `free signature ${id} has references`);
        continue;
      }
      live++;
      if (this.preferenceById[id] !== null) preferring++;
      const other = this.variantById[id] as number;
      if (other !== 0) {
        assert(this.variantById[other] === id && this.preferenceById[other]?.held === !this.preferenceById[id]?.held, `signature ${id}'s variant link is wrong`);
      }
      const requires = this.requiresById[id] ?? null;
      assert((this.refCounts[id] as number) > 0, `live signature ${id} has no references`);
      assert(this.idByKey.get(key) === id, `signature ${id} missing from the key map`);
      const anchor = this.anchorOf[id] ?? null;
      let anchorNeeded = false;
      let needsAny = false;
      for (const constraint of requires?.constraints ?? []) {
        if (!constraint.needsFeature) continue;
        needsAny = true;
        if (constraint.feature === anchor) anchorNeeded = true;
        useCounts.set(constraint.feature, (useCounts.get(constraint.feature) ?? 0) + 1);
      }
      if (anchor === null) assert(!needsAny && this.needingNothing.has(id), `signature ${id} should be anchored`);
      else {
        assert(anchorNeeded, `signature ${id} is anchored on a feature it does not need`);
        assert(this.anchored.get(anchor)?.has(id) === true, `feature index misses signature ${id}`);
        assert(!this.needingNothing.has(id), `signature ${id} filed twice`);
      }
    }
    assert(useCounts.size === this.featureUse.size, "feature use map holds stale features");
    for (const [feature, use] of useCounts) assert(this.featureUse.get(feature) === use, `feature ${feature} use count is wrong`);
    let filed = this.needingNothing.size;
    for (const set of this.anchored.values()) {
      assert(set.size > 0, "empty anchor set");
      filed += set.size;
    }
    assert(filed === live, "feature index holds freed signatures");
    assert(live === this.liveCount, "live signature count is wrong");
    assert(this.idByKey.size === live, "key map holds freed signatures");
    assert(live + this.freeIds.length === this.keyById.length - 1, "free list and live ids do not cover the id space");
    assert(preferring === this.preferring, "preferring count is wrong");
    assert(live - preferring <= this.signaturesMax || live <= 2 * this.signaturesMax, "registry over its bound");
  }
}
