// One live item in memory: the fields of its stored record that the engine
// reads (kept current; a write builds the ItemRecord from them with
// toRecord), its state, and the handles that let every index drop it without
// a scan (its ready-heap node, its delay/lease deadline, its TTL deadline).
// Ended items leave memory; only their outcome stays.
//
// Memory is the design constraint here (a million ready items is the common
// backlog): one object per item of at most 12 fields (JavaScriptCore's
// 112-byte size class; 13 would take 160), holding numbers and references to
// shared objects only. The payload, metadata, enqueue instant and `requires`
// stay in the store once the enqueue is durable and are read back when the
// item is delivered, shown or written whole (item-parts.ts's StoredOnly); the
// id string is built on demand; ns and topic are the Topic's strings;
// settings are shared; the state and the signature id share one number; the
// ready heap is found through the topic; the deadline and delivery counts
// (ItemProgress) and the fields most items never use (ItemExtras) sit in
// objects created only when needed (item-parts.ts). Accessors keep the
// record's field names.

import { IntrusiveHeapNode } from "../../lib/pairing-heap.ts";
import { assert } from "../../lib/assert.ts";
import type { DeliveryMode, ItemRecord, StoredState } from "../../storage/record.ts";
import type { ItemKey } from "../../storage/store.ts";
import type { LiveStateName } from "../api.ts";
import { formatId } from "./ids.ts";
import { type ItemDeadline, ItemExtras, ItemProgress, type ItemSettings, type StoredOnly, type UnstoredBytes } from "./item-parts.ts";
import type { Topic, TopicItem } from "../ready/topic.ts";
import { Group } from "../groups/group.ts";

/** A deadline of a live item: its delay, lease or TTL. */
export type LiveItemDeadline = ItemDeadline<LiveItem>;

/** The live states, by their code in LiveItem's stateAndSignature (3 bits). */
const stateNames: readonly LiveStateName[] = ["ready", "delayed", "waiting", "leased", "dead"];
const stateCodes: Readonly<Record<LiveStateName, number>> = { ready: 0, delayed: 1, waiting: 2, leased: 3, dead: 4 };
/** stateAndSignature = signatureId * stateCodeSpan + state code. */
const stateCodeSpan = 8;

/**
 * The item is its own ready-heap node (IntrusiveHeapNode): a separate node
 * object cost about 60 bytes per ready item and one more object for the
 * collector to trace. It is in a heap only while ready and committed. Its 12
 * fields: the heap's three links, stateAndSignature, progress, side,
 * priority, deliverAtMs, settings, shard, key, topic.
 */
export class LiveItem extends IntrusiveHeapNode<LiveItem> implements TopicItem<LiveItem> {
  /** The state's code and the `requires` signature (SignatureRegistry id, 0 for none) in one number: see `state` and `signatureId`. */
  private stateAndSignature: number;
  /** Deadline and delivery counts, from the first delay or delivery on (item-parts.ts). */
  progress: ItemProgress<LiveItem> | null = null;
  /**
   * The rarely used fields (ItemExtras, item-parts.ts), or, for an item that
   * uses none of them, the enqueue's record alone until its commit is durable
   * (an ItemExtras only to point at it would be one more object per enqueued
   * item), or null. Read through `extras` and `unstored`.
   */
  private side: ItemExtras<LiveItem> | UnstoredBytes | Group<LiveItem> | null = null;

  // The stored record's fields that every item has (record.ts documents each).
  priority: number;
  deliverAtMs: number;
  readonly settings: ItemSettings;

  constructor(
    readonly shard: number,
    readonly key: ItemKey,
    readonly topic: Topic<LiveItem>,
    signatureId: number,
    record: ItemRecord,
    /** The record's leaseMs, maxAttempts and delivery, interned (ItemSettingsTable.intern). */
    settings: ItemSettings,
    state: LiveStateName,
    /** The enqueue's bytes until its commit is durable; null for a stored item. */
    unstored: UnstoredBytes | null,
  ) {
    super();
    this.stateAndSignature = signatureId * stateCodeSpan + stateCodes[state];
    this.priority = record.priority;
    this.deliverAtMs = record.deliverAtMs;
    this.settings = settings;
    if (record.attempt !== 0 || record.deliveries !== 0 || record.leaseBoot !== 0 || record.leaseExpiresAtMs !== null) {
      const progress = this.ensureProgress();
      progress.attempt = record.attempt;
      progress.deliveries = record.deliveries;
      progress.leaseBoot = record.leaseBoot;
      progress.leaseExpiresAtMs = record.leaseExpiresAtMs;
    }
    this.side = unstored;
    if (record.ttlExpiresAtMs !== null || record.deadReason !== null || record.after !== null || record.key !== null) {
      const extras = this.ensureExtras();
      extras.ttlExpiresAtMs = record.ttlExpiresAtMs;
      extras.deadReason = record.deadReason;
      extras.after = record.after;
      extras.key = record.key;
    }
  }

  /** Whether the item sits in a ready heap (ready and committed). */
  get inReadyHeap(): boolean {
    return this.inHeap;
  }

  /** `<shard>:<key>`, built on demand: a stored string per item would cost more than the item. */
  get id(): string {
    return formatId(this.shard, this.key);
  }

  get ns(): string {
    return this.topic.ns;
  }

  get state(): LiveStateName {
    return stateNames[this.stateAndSignature % stateCodeSpan] as LiveStateName;
  }

  set state(state: LiveStateName) {
    const s = this.stateAndSignature;
    this.stateAndSignature = s - (s % stateCodeSpan) + stateCodes[state];
  }

  get signatureId(): number {
    return Math.floor(this.stateAndSignature / stateCodeSpan);
  }

  /** A preference's other variant (held or released; ItemStates switches it while the item is in no ready heap). */
  set signatureId(id: number) {
    this.stateAndSignature = id * stateCodeSpan + (this.stateAndSignature % stateCodeSpan);
  }

  // ---- progress: deadline and delivery counts (no object until one is set) ----

  /**
   * The item's delay or lease deadline, idle, to schedule for its next delay
   * or lease (DeadlineQueue.scheduleNode): its progress, which is its own
   * heap entry (item-parts.ts), so a million delays and leases leave no node
   * to collect. An item has one such deadline at a time.
   */
  idleTimer(): ItemProgress<LiveItem> {
    const progress = this.ensureProgress();
    if (progress.inHeap) assert(false, `engine: item ${this.id} already has a delay or lease deadline scheduled`);
    return progress;
  }

  /** The delay or lease deadline while it is scheduled, else null. */
  get timerNode(): ItemProgress<LiveItem> | null {
    const progress = this.progress;
    return progress !== null && progress.inHeap ? progress : null;
  }

  get attempt(): number {
    return this.progress === null ? 0 : this.progress.attempt;
  }

  set attempt(value: number) {
    if (value !== 0 || this.progress !== null) this.ensureProgress().attempt = value;
  }

  get deliveries(): number {
    return this.progress === null ? 0 : this.progress.deliveries;
  }

  set deliveries(value: number) {
    if (value !== 0 || this.progress !== null) this.ensureProgress().deliveries = value;
  }

  get leaseBoot(): number {
    return this.progress === null ? 0 : this.progress.leaseBoot;
  }

  set leaseBoot(value: number) {
    if (value !== 0 || this.progress !== null) this.ensureProgress().leaseBoot = value;
  }

  get leaseExpiresAtMs(): number | null {
    return this.progress === null ? null : this.progress.leaseExpiresAtMs;
  }

  set leaseExpiresAtMs(value: number | null) {
    if (value !== null || this.progress !== null) this.ensureProgress().leaseExpiresAtMs = value;
  }

  // ---- settings (shared) ----

  get leaseMs(): number {
    return this.settings.leaseMs;
  }

  get maxAttempts(): number {
    return this.settings.maxAttempts;
  }

  get delivery(): DeliveryMode {
    return this.settings.delivery;
  }

  // ---- extras ----

  /** Rarely used fields, or null when the item uses none of them (item-parts.ts). */
  get extras(): ItemExtras<LiveItem> | null {
    const side = this.side;
    return side instanceof ItemExtras ? side : null;
  }

  /**
   * The enqueue's bytes while its commit is not durable: such an item counts
   * in its state but sits in no ready heap, so it cannot be delivered before
   * it is stored. Null once committed (the store holds the bytes).
   */
  get unstored(): UnstoredBytes | null {
    const side = this.side;
    if (side === null || side instanceof Group) return null;
    return side instanceof ItemExtras ? side.unstored : side;
  }

  /** The enqueue's commit is durable: memory lets go of its bytes. */
  markStored(): void {
    const side = this.side;
    if (side === null) return;
    if (side instanceof Group) return;
    if (!(side instanceof ItemExtras)) {
      this.side = null;
      return;
    }
    side.unstored = null;
    if (side.isEmpty()) this.side = null;
    // An item whose only rare field is its group points at the group alone (an ItemExtras is about 110 bytes).
    else if (side.onlyGroup()) this.side = side.group as Group<LiveItem>;
  }

  /** True once the enqueue's commit is durable. */
  get committed(): boolean {
    return this.unstored === null;
  }

  /** The enqueue's durable promise while not committed. */
  get commit(): Promise<void> | null {
    const unstored = this.unstored;
    return unstored === null ? null : unstored.commit;
  }

  get ttlExpiresAtMs(): number | null {
    const extras = this.extras;
    return extras === null ? null : extras.ttlExpiresAtMs;
  }

  get ttlPassed(): boolean {
    const extras = this.extras;
    return extras !== null && extras.ttlPassed;
  }

  get deadReason(): string | null {
    const extras = this.extras;
    return extras === null ? null : extras.deadReason;
  }

  get after(): string[] | null {
    const extras = this.extras;
    return extras === null ? null : extras.after;
  }

  /** The item's named group, or null (the nil group). */
  get group(): Group<LiveItem> | null {
    const side = this.side;
    if (side instanceof Group) return side;
    return side instanceof ItemExtras ? (side.group as Group<LiveItem> | null) : null;
  }

  /** The item joins its named group (admit, load). */
  setGroup(group: Group<LiveItem>): void {
    if (this.side === null) this.side = group;
    else this.ensureExtras().group = group;
  }

  /** The idempotency key, or null. */
  get idempotencyKey(): string | null {
    const extras = this.extras;
    return extras === null ? null : extras.key;
  }

  /** The state as stored: ready, delayed and waiting are all `pending`. */
  get storedState(): StoredState {
    return this.state === "leased" ? "leased" : this.state === "dead" ? "dead" : "pending";
  }

  ensureExtras(): ItemExtras<LiveItem> {
    const side = this.side;
    if (side instanceof ItemExtras) return side;
    // The enqueue's record, or the group, if it sat here alone, moves into the new extras.
    const extras = new ItemExtras<LiveItem>();
    if (side instanceof Group) extras.group = side;
    else extras.unstored = side;
    this.side = extras;
    return extras;
  }

  ensureProgress(): ItemProgress<LiveItem> {
    if (this.progress === null) this.progress = new ItemProgress<LiveItem>(this);
    return this.progress;
  }
}

/**
 * The item's record for a write: a fresh object, so later in-memory changes
 * cannot leak into an earlier write. `stored` holds what only the store keeps
 * (ItemBytes.bytesOf reads it back).
 */
export function toRecord(item: LiveItem, stored: StoredOnly): ItemRecord {
  return {
    ns: item.topic.ns,
    topic: item.topic.name,
    priority: item.priority,
    payload: stored.payload,
    metadata: stored.metadata,
    enqueuedAtMs: stored.enqueuedAtMs,
    deliverAtMs: item.deliverAtMs,
    leaseMs: item.leaseMs,
    ttlExpiresAtMs: item.ttlExpiresAtMs,
    delivery: item.delivery,
    maxAttempts: item.maxAttempts,
    attempt: item.attempt,
    deliveries: item.deliveries,
    leaseBoot: item.leaseBoot,
    state: item.storedState,
    leaseExpiresAtMs: item.leaseExpiresAtMs,
    deadReason: item.deadReason,
    requires: stored.requires,
    after: item.after,
    key: item.idempotencyKey,
    group: item.group?.name ?? null,
    prefers: stored.prefers ?? null,
    preferWaitMs: stored.preferWaitMs ?? 0,
    trace: stored.trace ?? null,
  };
}
