// A string-keyed map split into a fixed number of parts by a hash of the key,
// so that no growth rehashes every entry at once, each part an open-addressing
// table of its own.
//
// Split: a JavaScriptCore Map doubles its table as it grows, copying every
// entry in one go: at 786,432 string keys that copy held the event loop for
// about 60 ms on the build box (45 ms for numbers), once per doubling. A
// topic's idempotency keys grow to a million while a cluster node adopts
// shards; split 64 ways, the largest copy is a 64th of that
// (decisions/049-item-values-in-pages.md).
//
// Open addressing: a Map's set cost 350-700 ns a new key at half a million
// keys on the 2-vCPU build VM, the largest single cost of filing a keyed
// shard. Here a slot is three neighbouring elements of one array (the key's
// hash, the key, the value), so a probe or a move touches one cache line
// (decisions/052-filing-keyed-items.md).
//
// Lazy: every topic has one (up to topicsMax, a million) and most hold no
// keys, so the parts are made at the first key and each part at its own
// first key.

/** Parts the map is split into (a power of two). */
const partCount = 64;
/** Bits of the hash that choose the part (the top ones; the low ones choose the slot). */
const partShift = 32 - Math.log2(partCount);
/** Slots a part starts with (a power of two). */
const capacityMin = 8;
/** Elements per slot: the code, the key, the value. */
const stride = 3;
/** A slot's code when it was never used: a lookup stops here. */
const empty = 0;
/** A slot's code when its key was deleted: a lookup goes on past it, an insert may reuse it. */
const deleted = 1;

class Part {
  /** Per slot: its code (empty, deleted, or the key's hash, never 0 or 1), its key, its value. */
  slots: unknown[] = newSlots(capacityMin);
  /** Slots in the table (a power of two). */
  capacity = capacityMin;
  /** Keys held. */
  size = 0;
  /** Slots not empty (keys held and deleted slots): what the load factor counts. */
  used = 0;
}

export class SplitMap<V> {
  /** The parts by the hash's top bits, null until the first key; a part is undefined until its first key. */
  private parts: Array<Part | undefined> | null = null;

  get size(): number {
    let size = 0;
    for (const part of this.parts ?? []) size += part?.size ?? 0;
    return size;
  }

  get(key: string): V | undefined {
    const code = hashOf(key);
    const part = this.partOf(code);
    if (part === undefined) return undefined;
    const slot = slotOf(part, code, key);
    return slot < 0 ? undefined : (part.slots[slot * stride + 2] as V);
  }

  set(key: string, value: V): void {
    const code = hashOf(key);
    if (this.parts === null) this.parts = new Array<Part | undefined>(partCount).fill(undefined);
    let part = this.parts[code >>> partShift];
    if (part === undefined) {
      part = new Part();
      this.parts[code >>> partShift] = part;
    }
    // At most half the slots used, so a probe meets an empty slot soon.
    if ((part.used + 1) * 2 > part.capacity) rehash(part);
    const slots = part.slots;
    const mask = part.capacity - 1;
    let reuse = -1;
    for (let slot = code & mask; ; slot = (slot + 1) & mask) {
      const at = slots[slot * stride];
      if (at === empty) {
        if (reuse < 0) {
          reuse = slot;
          part.used++;
        }
        break;
      }
      if (at === deleted) {
        if (reuse < 0) reuse = slot;
      } else if (at === code && slots[slot * stride + 1] === key) {
        slots[slot * stride + 2] = value;
        return;
      }
    }
    slots[reuse * stride] = code;
    slots[reuse * stride + 1] = key;
    slots[reuse * stride + 2] = value;
    part.size++;
  }

  delete(key: string): boolean {
    const code = hashOf(key);
    const part = this.partOf(code);
    if (part === undefined) return false;
    const slot = slotOf(part, code, key);
    if (slot < 0) return false;
    const slots = part.slots;
    slots[slot * stride] = deleted;
    slots[slot * stride + 1] = undefined;
    slots[slot * stride + 2] = undefined;
    part.size--;
    return true;
  }

  /** The part a key of hash `code` belongs to, undefined until it holds a key. */
  private partOf(code: number): Part | undefined {
    return this.parts === null ? undefined : this.parts[code >>> partShift];
  }
}

/** The slot holding `key` (of hash `code`) in `part`, or -1. */
function slotOf(part: Part, code: number, key: string): number {
  const slots = part.slots;
  const mask = part.capacity - 1;
  for (let slot = code & mask; ; slot = (slot + 1) & mask) {
    const at = slots[slot * stride];
    if (at === empty) return -1;
    if (at === code && slots[slot * stride + 1] === key) return slot;
  }
}

/** `capacity` empty slots, filled (not holey) so JavaScriptCore keeps them one contiguous array. */
function newSlots(capacity: number): unknown[] {
  const slots = new Array<unknown>(capacity * stride);
  for (let at = 0; at < slots.length; at += stride) {
    slots[at] = empty;
    slots[at + 1] = undefined;
    slots[at + 2] = undefined;
  }
  return slots;
}

/** Move a part's keys to a table with room: twice the slots when more than a quarter are keys, the same (deleted slots dropped) otherwise. */
function rehash(part: Part): void {
  const old = part.slots;
  const capacity = part.size * 4 > part.capacity ? part.capacity * 2 : part.capacity;
  const mask = capacity - 1;
  const slots = newSlots(capacity);
  for (let from = 0; from < old.length; from += stride) {
    const code = old[from] as number;
    if (code === empty || code === deleted) continue;
    let slot = code & mask;
    while (slots[slot * stride] !== empty) slot = (slot + 1) & mask;
    slots[slot * stride] = code;
    slots[slot * stride + 1] = old[from + 1];
    slots[slot * stride + 2] = old[from + 2];
  }
  part.slots = slots;
  part.capacity = capacity;
  part.used = part.size;
}

/** FNV-1a over every UTF-16 unit, mixed (murmur3's finalizer) so the top bits choose a part and the low bits a slot; never empty or deleted. */
function hashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let at = 0; at < key.length; at++) hash = Math.imul(hash ^ key.charCodeAt(at), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  // Never a marker: 0 and 1 become 2 and 3 (their top bits, the part, are the same).
  return hash === empty || hash === deleted ? hash + 2 : hash;
}
