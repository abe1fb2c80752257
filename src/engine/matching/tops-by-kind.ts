// Per topic, the tops of the ready heaps kept once per *eligibility class*: the
// worker kinds that may take exactly the same groups (signatures) of the topic
// share one class, and each class keeps its own binary heap over the slots it
// may take, ordered by each slot's best item. A pick is then a look at the
// class heap's root: no walk past entries the worker may not take, whatever
// its share of the topic (the shared TopsHeap walk visits about entries /
// eligible entries, and gives up into a scan of the kind's slots when better
// entries for other kinds pile up at its root).
//
// A slot belongs to every class that may take it (a bit mask per slot says
// which), but the class heaps are lazy about bad news (class-heap.ts): a
// lease makes a slot's best item worse or empties the slot, and that costs
// one write here and nothing in any class heap; the class that next meets
// the stale record at its root fixes it. Only a better item (an enqueue, a
// release) is pushed into the class heaps at once.
//
// The shared TopsHeap is for kinds without a class. When a class is created
// and no such kind has read it for classIdlePicksMin picks, it is retired (its
// updates skipped); a kind without a class refills it from the slots' keys.
//
// Bounds: at most eligibleClassesMax classes per topic; a kind that finds them
// all taken (none idle long enough to replace) walks the shared TopsHeap (the
// caller's fallback). A class learns of a new group from its kinds' verdicts;
// kinds that disagree leave it and find (or make) another at their next pick.
// docs/MATCHING.md has the design and the measurements.
//
// Preferences: a class is the kinds that may take the same groups AND fit
// each of them alike, so the class heap can order higher fit first within a
// priority (class-heap.ts's offsets; docs/decisions/030-preferences.md).

import { assert } from "../../lib/assert.ts";
import { ClassHeap } from "./class-heap.ts";
import { type FitSource, TopsHeap } from "./tops-heap.ts";
import { classIdlePicksMinDefault, eligibleClassesMaxDefault, kindMappingsMax } from "../../limits.ts";

/** The topic's signature groups, keyed by signature id (only the keys and the size are read). */
export type GroupsBySignature = ReadonlyMap<number, unknown>;

/** An EligibilitySource that can also say whether a kind id is still live (the Matcher evicts kinds). */
export interface KindSource extends FitSource {
  knowsKind(kind: number): boolean;
}

/**
 * Fit is folded into a class heap's priority as fit / fitScale: below 1 for
 * any fit (at most featuresMax x preferWeightMax = 64,000 < 2^16), so it never
 * reorders priorities, and exact in a double for any int32 priority.
 */
const fitScale = 65_536;



/** Doubles per slot record: priority, deliverAtMs, order, class mask. */
const slotStride = 4;
const maskField = 3;


/** What best() and eligibleCount() return for a kind without a class (all taken): use the TopsHeap walk. */
export const noClass = -3;

/** A class is its heap (one object fewer for a pick to reach), plus what it knows of its kinds and groups. */
class EligibilityClass extends ClassHeap {
  /** The kinds that share this class (ids may go stale when the Matcher evicts them). */
  readonly kinds: number[] = [];
  lastUsedPick = 0;
  /** signatures.size, kept beside it: a pick reads this object, not the Set's storage. */
  groupCount: number;
  constructor(
    readonly bit: number,
    /** The signatures of the topic's groups that this class may take. */
    readonly signatures: Set<number>,
    /** The class's fit for those of them it fits at all (absent: 0). */
    readonly fits: Map<number, number>,
    slotCapacity: number,
  ) {
    super(slotCapacity);
    this.groupCount = signatures.size;
  }

  /** Whether a kind with these verdicts and fits belongs here. */
  matches(eligible: readonly number[], fits: ReadonlyMap<number, number>): boolean {
    if (this.signatures.size !== eligible.length || this.fits.size !== fits.size) return false;
    for (const id of eligible) if (!this.signatures.has(id)) return false;
    for (const [id, fit] of fits) if (this.fits.get(id) !== fit) return false;
    return true;
  }

  fitOffsetOf(signatureId: number): number {
    return this.fits.size === 0 ? 0 : (this.fits.get(signatureId) ?? 0) / fitScale;
  }
}

export class TopsByKind {
  readonly shared = new TopsHeap();
  readonly classesMax: number;
  readonly classIdlePicksMin: number;
  private readonly classes: Array<EligibilityClass | undefined> = [];
  /** Pairs (kind, its class). */
  private kindPairs: Array<number | EligibilityClass> = [];
  /**
   * Per slot, one record of `slotStride` doubles (one cache line for all an
   * update reads): its best item's key (priority, deliverAtMs, order;
   * priority NaN while it has none) and its class mask (bit i set when class
   * i, with its own heap, may take the slot).
   */
  private slotState = new Float64Array(8 * slotStride).fill(Number.NaN);
  private slotCapacity = 8;
  private picks = 0;
  private source: KindSource | null = null;
  /** Whether the shared TopsHeap holds every slot's top (see the file header). */
  private sharedLive = true;
  /** The pick count when the shared heap was last read. */
  private sharedUsedAtPick = Number.NEGATIVE_INFINITY;

  constructor(options: { classesMax?: number; classIdlePicksMin?: number } = {}) {
    this.classesMax = options.classesMax ?? eligibleClassesMaxDefault;
    this.classIdlePicksMin = options.classIdlePicksMin ?? classIdlePicksMinDefault;
    assert(this.classesMax >= 1 && this.classesMax <= 32, "eligible classes per topic must be 1..32");
  }

  /** Classes in use. */
  get classCount(): number {
    let count = 0;
    for (const cls of this.classes) if (cls !== undefined) count++;
    return count;
  }

  addEntry(signatureId: number, shard: number): number {
    const slot = this.shared.addEntry(signatureId, shard);
    if (slot >= this.slotCapacity) this.growSlots(Math.max(slot + 1, this.slotCapacity * 2));
    let mask = 0;
    for (const cls of this.classes) {
      if (cls === undefined || !cls.signatures.has(signatureId)) continue;
      mask |= 1 << cls.bit;
      cls.setOffset(slot, cls.fitOffsetOf(signatureId));
    }
    const base = slot * slotStride;
    this.slotState[base] = Number.NaN;
    this.slotState[base + maskField] = mask;
    return slot;
  }

  removeEntry(slot: number): void {
    if (this.hasTop(slot)) assert(false, `tops by kind: removing slot ${slot} while it has a top`);
    this.shared.removeEntry(slot);
    const base = slot * slotStride;
    let mask = (this.slotState[base + maskField] as number) | 0;
    // The slot may be reused for another group: its stale records go now.
    while (mask !== 0) {
      const bit = 31 - Math.clz32(mask & -mask);
      mask &= mask - 1;
      (this.classes[bit] as EligibilityClass).remove(slot);
    }
    this.slotState[base + maskField] = 0;
  }

  /** Whether the slot's recorded best item has this key, here and (while maintained) in the shared heap: for the owner's invariant checks. */
  topIs(slot: number, priority: number, deliverAtMs: number, order: number): boolean {
    const state = this.slotState;
    const base = slot * slotStride;
    const recorded = state[base] === priority && state[base + 1] === deliverAtMs && state[base + 2] === order;
    return recorded && (!this.sharedLive || this.shared.topIs(slot, priority, deliverAtMs, order));
  }

  /** Whether the shared TopsHeap is maintained now (for the owner's invariant checks). */
  get sharedIsLive(): boolean {
    return this.sharedLive;
  }

  setTop(slot: number, priority: number, deliverAtMs: number, order: number): void {
    if (this.sharedLive) this.shared.setTop(slot, priority, deliverAtMs, order);
    const state = this.slotState;
    const base = slot * slotStride;
    const previous = state[base] as number;
    // Worse than before (a lease took the best item): every class record is still a lower bound.
    const worse =
      previous < priority ||
      (previous === priority && ((state[base + 1] as number) < deliverAtMs || (state[base + 1] === deliverAtMs && (state[base + 2] as number) < order)));
    state[base] = priority;
    state[base + 1] = deliverAtMs;
    state[base + 2] = order;
    if (worse) return;
    let mask = (state[base + maskField] as number) | 0;
    while (mask !== 0) {
      const bit = 31 - Math.clz32(mask & -mask);
      mask &= mask - 1;
      (this.classes[bit] as EligibilityClass).lower(slot, priority, deliverAtMs, order);
    }
  }

  /** The slot's heap is empty. Its class records stay until a pick meets them (lazy: see the file header). */
  clearTop(slot: number): void {
    if (this.sharedLive) this.shared.clearTop(slot);
    this.slotState[slot * slotStride] = Number.NaN;
  }

  /** A new group (signature) joined the topic: each class asks its kinds whether they may take it. */
  groupAdded(signatureId: number): void {
    const source = this.source;
    if (source === null) return;
    for (const cls of this.classes) {
      if (cls === undefined) continue;
      let verdict: boolean | null = null;
      let fit = 0;
      for (let i = 0; i < cls.kinds.length; i++) {
        const kind = cls.kinds[i] as number;
        const known = source.knowsKind(kind);
        const eligible = known && source.isEligible(kind, signatureId);
        const kindFit = eligible ? source.fitOf(kind, signatureId) : 0;
        if (known && (verdict === null || (eligible === verdict && kindFit === fit))) {
          verdict = eligible;
          fit = kindFit;
          continue;
        }
        // Evicted, or it disagrees with the class: it leaves (and finds its class again at its next pick).
        cls.kinds.splice(i--, 1);
        this.forgetKind(kind);
      }
      if (verdict === null) {
        this.dropClass(cls);
        continue;
      }
      if (verdict) {
        cls.signatures.add(signatureId);
        if (fit !== 0) cls.fits.set(signatureId, fit);
        cls.groupCount = cls.signatures.size;
      }
    }
  }

  /** A group left the topic (its slots were removed first). */
  groupRemoved(signatureId: number): void {
    for (const cls of this.classes) {
      if (cls === undefined) continue;
      cls.signatures.delete(signatureId);
      cls.fits.delete(signatureId);
      cls.groupCount = cls.signatures.size;
    }
  }

  /**
   * How many of the topic's groups kind `kind` may take, or noClass when it has
   * no class here. `groups` is keyed by the topic's group signatures.
   */
  eligibleCount(source: KindSource, kind: number, groups: GroupsBySignature): number {
    const cls = this.classOf(source, kind, groups);
    return cls === null ? noClass : cls.groupCount;
  }

  /**
   * The slot holding the best item kind `kind` may take on a shard marked 1 in
   * `shardOk` (null: every shard), -1 when there is none, or noClass when the
   * kind has no class here (the caller walks the shared TopsHeap instead).
   */
  best(source: KindSource, kind: number, shardOk: Uint8Array | null, groups: GroupsBySignature): number {
    const cls = this.classOf(source, kind, groups);
    if (cls === null) return noClass;
    cls.lastUsedPick = ++this.picks;
    return cls.best(this.slotState, slotStride, this.shared, shardOk);
  }

  /**
   * The best of `slots` (a kind's, without a class) by its current key with
   * the kind's fit folded in, on shards `shardOk` allows: the fallback when
   * the topic's signatures have preferences (the shared heap ignores fit).
   */
  bestByFit(source: FitSource, kind: number, slots: Int32Array, shardOk: Uint8Array | null): number {
    const state = this.slotState;
    let best = -1;
    let bestPriority = 0;
    let bestDeliverAtMs = 0;
    let bestOrder = 0;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as number;
      const base = slot * slotStride;
      const slotPriority = state[base] as number;
      if (Number.isNaN(slotPriority) || (shardOk !== null && shardOk[this.shared.shardOf(slot)] !== 1)) continue;
      const priority = slotPriority - source.fitOf(kind, this.shared.signatureOf(slot)) / fitScale;
      const deliverAtMs = state[base + 1] as number;
      const order = state[base + 2] as number;
      const better = best === -1 || priority < bestPriority || (priority === bestPriority && (deliverAtMs < bestDeliverAtMs || (deliverAtMs === bestDeliverAtMs && order < bestOrder)));
      if (!better) continue;
      best = slot;
      bestPriority = priority;
      bestDeliverAtMs = deliverAtMs;
      bestOrder = order;
    }
    return best;
  }

  /** The shared TopsHeap for a kind without a class, refilled first if it was retired. */
  sharedHeap(): TopsHeap {
    this.sharedUsedAtPick = this.picks;
    if (this.sharedLive) return this.shared;
    const state = this.slotState;
    const slotCount = this.shared.slotCount;
    for (let slot = 0; slot < slotCount; slot++) {
      const base = slot * slotStride;
      if (this.hasTop(slot)) this.shared.setTop(slot, state[base] as number, state[base + 1] as number, state[base + 2] as number);
    }
    this.sharedLive = true;
    return this.shared;
  }

  /** Stops maintaining the shared heap when no kind without a class read it lately. */
  private retireSharedIfUnread(): void {
    if (!this.sharedLive || this.picks - this.sharedUsedAtPick < this.classIdlePicksMin) return;
    this.shared.clearAllTops();
    this.sharedLive = false;
  }

  private classOf(source: KindSource, kind: number, groups: GroupsBySignature): EligibilityClass | null {
    const pairs = this.kindPairs;
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === kind) return pairs[i + 1] as EligibilityClass;
    this.source = source;
    const eligible: number[] = [];
    const fits = new Map<number, number>();
    const preferences = source.hasPreferences();
    for (const signatureId of groups.keys()) {
      if (!source.isEligible(kind, signatureId)) continue;
      eligible.push(signatureId);
      const fit = preferences ? source.fitOf(kind, signatureId) : 0;
      if (fit !== 0) fits.set(signatureId, fit);
    }
    let found = this.classes.find((cls) => cls !== undefined && cls.matches(eligible, fits)) ?? null;
    found ??= this.newClass(new Set(eligible), fits);
    if (found === null) return null;
    if (!found.kinds.includes(kind)) {
      if (found.kinds.length >= kindMappingsMax) this.pruneKinds(found, source);
      found.kinds.push(kind);
    }
    if (pairs.length >= 2 * kindMappingsMax) pairs.length = 0;
    pairs.push(kind, found);
    return found;
  }

  private newClass(signatures: Set<number>, fits: Map<number, number>): EligibilityClass | null {
    let bit = this.classes.findIndex((cls) => cls === undefined);
    if (bit === -1 && this.classes.length < this.classesMax) bit = this.classes.length;
    if (bit === -1) {
      let idlest: EligibilityClass | undefined;
      for (const cls of this.classes) if (cls !== undefined && (idlest === undefined || cls.lastUsedPick < idlest.lastUsedPick)) idlest = cls;
      if (idlest === undefined || this.picks - idlest.lastUsedPick < this.classIdlePicksMin) return null;
      bit = idlest.bit;
      this.dropClass(idlest);
    }
    const cls = new EligibilityClass(bit, signatures, fits, this.slotCapacity);
    this.fillHeap(cls);
    this.classes[bit] = cls;
    cls.lastUsedPick = this.picks;
    this.retireSharedIfUnread();
    return cls;
  }

  /** Fills a new class's heap: marks every slot it may take with its bit, and heaps those that have a top. */
  private fillHeap(cls: EligibilityClass): void {
    const signatures = cls.signatures;
    const bitValue = 1 << cls.bit;
    const slotCount = this.shared.slotCount;
    for (let slot = 0; slot < slotCount; slot++) {
      if (!this.shared.isEntry(slot) || !signatures.has(this.shared.signatureOf(slot))) continue;
      const base = slot * slotStride;
      const state = this.slotState;
      state[base + maskField] = ((state[base + maskField] as number) | 0) | bitValue;
      cls.setOffset(slot, cls.fitOffsetOf(this.shared.signatureOf(slot)));
      if (this.hasTop(slot)) cls.append(slot, state[base] as number, state[base + 1] as number, state[base + 2] as number);
    }
    cls.heapify();
  }

  private dropClass(cls: EligibilityClass): void {
    const keep = ~(1 << cls.bit);
    const state = this.slotState;
    for (let slot = 0; slot < this.slotCapacity; slot++) state[slot * slotStride + maskField] = ((state[slot * slotStride + maskField] as number) | 0) & keep;
    this.classes[cls.bit] = undefined;
    const pairs = this.kindPairs;
    const kept: Array<number | EligibilityClass> = [];
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i + 1] !== cls) kept.push(pairs[i] as number, pairs[i + 1] as EligibilityClass);
    this.kindPairs = kept;
  }

  private forgetKind(kind: number): void {
    const at = this.kindPairs.findIndex((value, i) => i % 2 === 0 && value === kind);
    if (at !== -1) this.kindPairs.splice(at, 2);
  }

  /** Drops kinds the source no longer knows from a class whose kind list has grown long. */
  private pruneKinds(cls: EligibilityClass, source: KindSource): void {
    for (let i = cls.kinds.length - 1; i >= 0; i--) {
      const kind = cls.kinds[i] as number;
      if (source.knowsKind(kind)) continue;
      cls.kinds.splice(i, 1);
      this.forgetKind(kind);
    }
    // Still long: live kinds beyond the bound are forgotten too (they re-join at their next pick).
    while (cls.kinds.length >= kindMappingsMax) this.forgetKind(cls.kinds.shift() as number);
  }

  private hasTop(slot: number): boolean {
    return !Number.isNaN(this.slotState[slot * slotStride]);
  }

  private growSlots(capacity: number): void {
    const state = new Float64Array(capacity * slotStride).fill(Number.NaN);
    state.set(this.slotState);
    this.slotState = state;
    this.slotCapacity = capacity;
    for (const cls of this.classes) cls?.growSlots(capacity);
  }

  /**
   * Checks the classes against the topic's groups (signature ids, as given)
   * and, for every kind the source still knows, against its verdicts.
   */
  checkInvariants(groups: GroupsBySignature): void {
    this.shared.checkInvariants();
    const groupSet = new Set(groups.keys());
    const slotCount = this.shared.slotCount;
    for (let bit = 0; bit < this.classes.length; bit++) {
      const cls = this.classes[bit];
      if (cls === undefined) continue;
      assert(cls.bit === bit && cls.groupCount === cls.signatures.size, `tops by kind: class ${bit} misplaced or miscounted`);
      for (const signatureId of cls.signatures) assert(groupSet.has(signatureId), `tops by kind: class ${bit} holds a group the topic lacks`);
      const source = this.source;
      for (const kind of cls.kinds) {
        if (source === null || !source.knowsKind(kind)) continue;
        for (const id of groupSet) {
          assert(source.isEligible(kind, id) === cls.signatures.has(id), `tops by kind: kind ${kind} disagrees with class ${bit}`);
          if (cls.signatures.has(id)) assert(source.fitOf(kind, id) === (cls.fits.get(id) ?? 0), `tops by kind: kind ${kind}'s fit disagrees with class ${bit}`);
        }
      }
      let expected = 0;
      for (let slot = 0; slot < slotCount; slot++) {
        const member = this.shared.isEntry(slot) && cls.signatures.has(this.shared.signatureOf(slot));
        assert(((((this.slotState[slot * slotStride + maskField] as number) | 0) >>> bit) & 1) === (member ? 1 : 0), `tops by kind: slot ${slot} mask is wrong for class ${bit}`);
        // Lazy: a member slot with an item has a record; an emptied one may keep its record until a pick meets it.
        const inHeap = cls.contains(slot);
        if (member && this.hasTop(slot)) assert(inHeap, `tops by kind: slot ${slot} with an item is missing from class ${bit}`);
        if (!member) assert(!inHeap, `tops by kind: slot ${slot} is in class ${bit} but not a member`);
        if (inHeap) expected++;
      }
      assert(cls.size === expected, `tops by kind: class ${bit} heap size is wrong`);
      cls.checkInvariants(this.slotState, slotStride);
    }
    for (let slot = 0; slot < slotCount; slot++) {
      if (!this.shared.isEntry(slot)) continue;
      const inShared = this.shared.hasTop(slot);
      if (this.sharedLive) assert(inShared === this.hasTop(slot), `tops by kind: slot ${slot} top flag out of step`);
      else assert(!inShared, `tops by kind: retired shared heap holds slot ${slot}`);
    }
    for (let i = 0; i < this.kindPairs.length; i += 2) {
      const cls = this.kindPairs[i + 1] as EligibilityClass;
      assert(this.classes[cls.bit] === cls && cls.kinds.includes(this.kindPairs[i] as number), "tops by kind: a kind maps to a class that does not list it");
    }
  }
}
