// Which signatures a worker may take, answered from a cache. Workers come in a
// few kinds (equal capability sets); each kind gets a small id and a verdict
// array indexed by signature id (0 unknown, 1 eligible, 2 not), filled lazily
// by satisfies() the first time a (kind, signature) pair is asked about. So the
// dequeue hot path costs one Map lookup (workerKind) and one array read per
// signature it considers.
//
// Bounds: at most workerKindsMax kinds are cached; the least recently used is
// evicted. A kind id names one cache entry and is never reused for another
// entry, but it is only valid until that entry is evicted: code that keeps a
// worker across turns (a parked dequeue) keeps its Capabilities and calls
// workerKind() again when it needs a kind. isEligible() asserts on a stale id.
//
// Released signature ids are cleared from every kind's verdicts before the
// registry can hand the id out again (registry release listener).
//
// A signature with `prefers` also has a fit per kind (the weights of the
// entries the kind satisfies), cached beside the verdict and computed with
// it; a held signature (the item's first prefer_wait_ms) is eligible only to
// the kinds that fit fully (docs/decisions/030-preferences.md).

import { assert } from "../../lib/assert.ts";
import { constraintHolds, satisfies } from "./satisfies.ts";
import type { ReadonlySignatureRegistry } from "./signature-registry.ts";
import type { Capabilities } from "./types.ts";
import { workerKindsMaxDefault } from "../../limits.ts";


const unknownVerdict = 0;
const eligibleVerdict = 1;
const ineligibleVerdict = 2;

class KindEntry {
  verdicts: Uint8Array;
  /** Fit per signature id, valid where the verdict is known (0 for signatures without `prefers`). */
  fits: Int32Array;
  lastUsed = 0;
  /** eligibleAll() result and the registry version it was computed at. */
  eligibleAll: number[] | null = null;
  eligibleAllVersion = -1;
  constructor(
    readonly id: number,
    readonly key: string,
    readonly caps: Capabilities | null,
    capacity: number,
  ) {
    this.verdicts = new Uint8Array(capacity);
    this.fits = new Int32Array(capacity);
  }
}

export interface MatcherOptions {
  workerKindsMax?: number;
  /** Use the registry's feature index in eligibleAll() (on by default; off only to measure its effect). */
  featureIndex?: boolean;
}

export class Matcher {
  readonly workerKindsMax: number;
  private readonly useFeatureIndex: boolean;
  private readonly byKey = new Map<string, KindEntry>();
  /** Entries by slot; a kind id is `slot + workerKindsMax * generation`. */
  private readonly slots: Array<KindEntry | undefined> = [];
  private readonly slotGenerations: number[] = [];
  private useCounter = 0;
  /** The entry isEligible() used last: a pick asks about one kind many times in a row. */
  private lastEntry: KindEntry | null = null;
  private evictionCount = 0;

  constructor(
    private readonly registry: ReadonlySignatureRegistry,
    options: MatcherOptions = {},
  ) {
    this.workerKindsMax = options.workerKindsMax ?? workerKindsMaxDefault;
    this.useFeatureIndex = options.featureIndex ?? true;
    assert(this.workerKindsMax >= 1, "workerKindsMax must be at least 1");
    registry.onRelease((id) => this.forgetSignature(id));
  }

  /** Cached kinds. */
  get kindCount(): number {
    return this.byKey.size;
  }

  /** Kinds evicted so far (a steady climb means workerKindsMax is too small for the fleet). */
  get evictions(): number {
    return this.evictionCount;
  }

  /** The kind id of a capability set; equal sets (same canonical key) share one. */
  workerKind(caps: Capabilities | null): number {
    // Canonical keys are JSON arrays, so "" cannot collide with a real set.
    const key = caps === null ? "" : caps.key;
    const found = this.byKey.get(key);
    if (found !== undefined) {
      found.lastUsed = ++this.useCounter;
      return found.id;
    }
    let slot = this.slots.length;
    if (slot >= this.workerKindsMax) slot = this.evictLeastRecent();
    const generation = this.slotGenerations[slot] ?? 0;
    this.slotGenerations[slot] = generation + 1;
    const entry = new KindEntry(slot + this.workerKindsMax * generation, key, caps, this.registry.idCeiling);
    entry.lastUsed = ++this.useCounter;
    this.slots[slot] = entry;
    this.byKey.set(key, entry);
    return entry.id;
  }

  /** Whether `kind` names a cached kind (false once it was evicted). */
  knowsKind(kind: number): boolean {
    const entry = this.slots[kind % this.workerKindsMax];
    return entry !== undefined && entry.id === kind;
  }

  /** Whether worker kind `kind` may take items of signature `signatureId` (0 = no requirements: always). */
  isEligible(kind: number, signatureId: number): boolean {
    if (signatureId === 0) return true;
    const entry = this.entryOf(kind);
    let verdicts = entry.verdicts;
    if (signatureId >= verdicts.length) verdicts = this.grow(entry);
    const verdict = verdicts[signatureId];
    if (verdict !== unknownVerdict) return verdict === eligibleVerdict;
    return this.evaluate(entry, signatureId);
  }

  /** Kind `kind`'s fit for signature `signatureId`: the weights of the `prefers` entries it satisfies (0 without prefers). */
  fitOf(kind: number, signatureId: number): number {
    if (signatureId === 0) return 0;
    const entry = this.entryOf(kind);
    if (signatureId >= entry.verdicts.length || entry.verdicts[signatureId] === unknownVerdict) this.isEligible(kind, signatureId);
    return entry.fits[signatureId] as number;
  }

  /** Whether kind `kind` satisfies every `prefers` entry of signature `signatureId` (true without prefers). */
  fitsFully(kind: number, signatureId: number): boolean {
    const preference = this.registry.preferenceOf(signatureId);
    return preference === null || this.fitOf(kind, signatureId) === preference.prefers.totalWeight;
  }

  /** Whether any live signature has `prefers` (while none does, every fit is 0). */
  hasPreferences(): boolean {
    return this.registry.preferringCount > 0;
  }

  /** The ids among `candidateIds` that kind `kind` may take, in the given order. */
  eligibleSignatures(kind: number, candidateIds: readonly number[]): number[] {
    const eligible: number[] = [];
    for (const id of candidateIds) if (this.isEligible(kind, id)) eligible.push(id);
    return eligible;
  }

  /**
   * Every live signature id (0 excluded) kind `kind` may take, ascending.
   * Cached until a signature is created or freed. With the feature index, only
   * signatures anchored on a feature the worker has (or needing none) are
   * evaluated: a worker lacking `pool-17` never looks at the signatures filed
   * under it.
   */
  eligibleAll(kind: number): readonly number[] {
    const entry = this.entryOf(kind);
    if (entry.eligibleAll !== null && entry.eligibleAllVersion === this.registry.version) return entry.eligibleAll;
    const result = this.useFeatureIndex ? this.candidatesByIndex(entry) : [...this.registry.liveIds()];
    const eligible: number[] = [];
    for (const id of result) if (this.isEligible(kind, id)) eligible.push(id);
    eligible.sort((a, b) => a - b);
    entry.eligibleAll = eligible;
    entry.eligibleAllVersion = this.registry.version;
    return eligible;
  }

  /** Signatures anchored on a feature the kind has, or needing none: a superset of the eligible ones. */
  private candidatesByIndex(entry: KindEntry): number[] {
    const candidates = [...this.registry.signaturesNeedingNothing()];
    if (entry.caps === null) return candidates;
    for (const feature of entry.caps.features.keys()) {
      const anchored = this.registry.signaturesAnchoredOn(feature);
      if (anchored !== undefined) for (const id of anchored) candidates.push(id);
    }
    return candidates;
  }

  private entryOf(kind: number): KindEntry {
    const last = this.lastEntry;
    if (last !== null && last.id === kind) return last;
    const entry = this.slots[kind % this.workerKindsMax];
    if (entry === undefined || entry.id !== kind) assert(false, `worker kind ${kind} is unknown or was evicted; call workerKind() again`);
    this.lastEntry = entry;
    return entry;
  }

  private evaluate(entry: KindEntry, signatureId: number): boolean {
    assert(signatureId !== 0, "signature 0 is never evaluated");
    // A freed id (a stale group entry in a topic's signature heaps may name one: groups/signature-heaps.ts)
    // holds no item anyone could take; not cached, since the registry may hand the id out again.
    if (!this.registry.isLive(signatureId)) return false;
    const requires = this.registry.requiresOf(signatureId);
    let eligible = requires === null || satisfies(requires, entry.caps);
    const preference = this.registry.preferenceOf(signatureId);
    let fit = 0;
    if (preference !== null) {
      for (const { constraint, weight } of preference.prefers.entries) {
        if (entry.caps !== null && constraintHolds(constraint, entry.caps.features.get(constraint.feature))) fit += weight;
      }
      if (preference.held && fit !== preference.prefers.totalWeight) eligible = false;
    }
    entry.fits[signatureId] = fit;
    entry.verdicts[signatureId] = eligible ? eligibleVerdict : ineligibleVerdict;
    return eligible;
  }

  private grow(entry: KindEntry): Uint8Array {
    const size = Math.max(this.registry.idCeiling, entry.verdicts.length * 2);
    const grown = new Uint8Array(size);
    grown.set(entry.verdicts);
    entry.verdicts = grown;
    const fits = new Int32Array(size);
    fits.set(entry.fits);
    entry.fits = fits;
    return grown;
  }

  private evictLeastRecent(): number {
    let victim: KindEntry | undefined;
    for (const entry of this.slots) if (entry !== undefined && (victim === undefined || entry.lastUsed < victim.lastUsed)) victim = entry;
    assert(victim !== undefined, "eviction with no kinds");
    this.byKey.delete(victim.key);
    if (this.lastEntry === victim) this.lastEntry = null;
    this.evictionCount++;
    return victim.id % this.workerKindsMax;
  }

  private forgetSignature(id: number): void {
    for (const entry of this.slots) {
      if (entry !== undefined && id < entry.verdicts.length) entry.verdicts[id] = unknownVerdict;
    }
  }

  checkInvariants(): void {
    assert(this.byKey.size <= this.workerKindsMax, "more kinds than workerKindsMax");
    let occupied = 0;
    for (let slot = 0; slot < this.slots.length; slot++) {
      const entry = this.slots[slot];
      if (entry === undefined) continue;
      occupied++;
      assert(entry.id % this.workerKindsMax === slot, `kind ${entry.id} sits in the wrong slot`);
      assert(this.byKey.get(entry.key) === entry, `kind ${entry.id} missing from the key map`);
      for (let id = 1; id < entry.verdicts.length; id++) {
        const verdict = entry.verdicts[id];
        if (verdict === unknownVerdict) continue;
        assert(this.registry.isLive(id), `kind ${entry.id} caches a verdict for freed signature ${id}`);
      }
    }
    assert(occupied === this.byKey.size, "slots and key map disagree");
  }
}
