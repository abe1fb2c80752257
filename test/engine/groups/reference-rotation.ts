// A reference model of fair sharing and limits (docs/PROTOCOL.md "Fair
// sharing and limits", and docs/SCHEDULING.md's choices where the contract is
// silent), written from those documents and not from src/engine/groups:
// plain maps and linear scans, slow and obvious. fair-model.test.ts drives it
// beside the engine and wants the same deliveries, in the same order.
//
// Per topic it keeps:
// - items and their states (ready, delayed, leased, dead; ended ones leave),
//   in delivery order: priority, deliverAtMs, enqueue order (the key in the
//   id: keys are global and monotonic);
// - two kinds of worker: one with the capability gpu, which may take every
//   item, and one without, which may take only items without `requires`;
// - its groups, the nil group (items without `group`) among them, each with
//   a virtual time v (float64; a delivery adds 1 / weight), and the set S of
//   the groups "in the rotation": holding a ready item, not held back by a
//   pause or a bound, whatever the worker. A group entering S starts at
//   max(own v, least v in S), or max(own v, L) when S is empty, L being the
//   least v of S when S last held a group, counting the delivery that
//   emptied it ("post"; "pre" does not count it: an option, as the documents
//   do not say). The next delivery to a worker comes from the group of S
//   whose best item that worker may take has the best priority, then the
//   least v, then comes first in delivery order.
// - policies: the topic's own (max_leased, rate), "*" (weight, max_leased and
//   rate of every group without a policy of its own) and per group; a
//   `policy` request replaces the whole stored policy of its scope;
// - token buckets, in exact rational arithmetic, kept as the instant they are
//   full again: `count` tokens at most, refilled continuously over `per_ms`,
//   one taken per delivery; a new one starts full; a rate change keeps the
//   tokens, capped at the new count. A group's bucket is one whether its own
//   rate or the "*" one binds it. Buckets outlive groups and topics;
// - group pauses (until resume, or until untilMs).
//
// The lifecycle SCHEDULING.md documents, which the order depends on:
// - the rotation starts at a topic's first item with a group, its first group
//   pause or its first group policy; before, v means nothing (the nil group
//   starts at 0 then);
// - a topic with no item and no paused group is dropped, and every v and L
//   with it (the next rotation starts from 0);
// - a named group with no items and no pause is forgotten once its v is not
//   ahead of the least v; one still ahead lingers and is looked at again as
//   other groups enter S, two per entry (a forgotten group comes back at the
//   least v, which never goes down: the same v it would have had);
// - after a restart v and L start at 0, and the buckets of a topic whose
//   policies were read back start empty at the restart instant.
//
// And what the engine does where the documents say nothing, copied so that
// orders compare exactly (each is named where it is done):
// - a rate hold is found lazily: by the delivery that empties the bucket, or
//   by a pick that meets a dry bucket (which then holds the group or topic and
//   picks again); a policy change, or a group made again after being
//   forgotten, lifts the hold until then; a held scope comes back at its
//   refill event, rescheduled while the bucket is still dry;
// - a bucket follows a changed rate when it is next read (a pick, a delivery,
//   a refill, a policy change on a live group or an existing topic, a group
//   made): its tokens are counted under the old rate until then;
// - a "*" change reads the nil group's policy first, then the live groups'
//   in the order they were made; groups released at once enter S one after
//   another, the first setting the floor for the others;
// - timed events (an item due, a lease end, a pause end, a refill) run in
//   time order, ties in the order they were scheduled; a recovery schedules
//   the items' by shard and key, then the pauses';
// - a bucket made within per_ms of a restart starts empty at the restart
//   instant, whatever rate it is made for.

export const nilKey = "\u0000nil";
const topicKey = "\u0000topic";

export type GroupName = string | null;

export interface Rate {
  count: number;
  perMs: number;
}

export interface RefPolicy {
  weight: number | null;
  maxLeased: number | null;
  rate: Rate | null;
}

export type RefState = "ready" | "delayed" | "leased" | "dead" | "ended";

export interface RefItem {
  id: string;
  /** The key within the id (enqueue order). */
  seq: number;
  topic: string;
  group: GroupName;
  priority: number;
  /** Requires {gpu: true}: only a worker with that capability may take it. */
  gpu: boolean;
  deliverAtMs: number;
  leaseMs: number;
  delivery: "at_least_once" | "at_most_once";
  maxAttempts: number;
  attempt: number;
  state: RefState;
  leaseExpiresAtMs: number;
  /** Bumped whenever the item's timer (due or lease) is replaced: older events are stale. */
  timerGen: number;
  outcome: string | null;
}

export interface Delivered {
  id: string;
  topic: string;
  group: GroupName;
  attempt: number;
  leaseExpiresAtMs: number;
}

export interface RefOptions {
  lastLeastV: "pre" | "post";
}

/** An exact rational number of milliseconds (bigint numerator and denominator). */
class Q {
  constructor(
    readonly n: bigint,
    readonly d: bigint = 1n,
  ) {}

  static of(ms: number): Q {
    return new Q(BigInt(ms));
  }

  static ratio(n: number, d: number): Q {
    return new Q(BigInt(n), BigInt(d)).norm();
  }

  private norm(): Q {
    let a = this.n < 0n ? -this.n : this.n;
    let b = this.d;
    while (b !== 0n) [a, b] = [b, a % b];
    return a <= 1n ? this : new Q(this.n / a, this.d / a);
  }

  add(o: Q): Q {
    return new Q(this.n * o.d + o.n * this.d, this.d * o.d).norm();
  }

  sub(o: Q): Q {
    return new Q(this.n * o.d - o.n * this.d, this.d * o.d).norm();
  }

  mul(o: Q): Q {
    return new Q(this.n * o.n, this.d * o.d).norm();
  }

  cmp(o: Q): number {
    const x = this.n * o.d - o.n * this.d;
    return x < 0n ? -1 : x > 0n ? 1 : 0;
  }

  max(o: Q): Q {
    return this.cmp(o) >= 0 ? this : o;
  }

  /** The least integer at or above. */
  ceil(): number {
    const q = this.n / this.d;
    return Number(this.n > q * this.d ? q + 1n : q);
  }

  toNumber(): number {
    return Number(this.n) / Number(this.d);
  }
}

/**
 * A token bucket in exact arithmetic, kept as the instant it is full again:
 * each take moves that instant on by per_ms / count (one token's time), and
 * the level at any instant follows from it.
 */
export class RefBucket {
  private constructor(
    public count: number,
    public perMs: number,
    private fullAt: Q,
  ) {}

  static full(rate: Rate, nowMs: number): RefBucket {
    return new RefBucket(rate.count, rate.perMs, Q.of(nowMs));
  }

  /** Empty at `emptyAtMs`, refilling since. */
  static emptiedAt(rate: Rate, emptyAtMs: number): RefBucket {
    return new RefBucket(rate.count, rate.perMs, Q.of(emptyAtMs + rate.perMs));
  }

  private get tokenMs(): Q {
    return Q.ratio(this.perMs, this.count);
  }

  /** Tokens held at nowMs. */
  private level(nowMs: number): Q {
    const missing = this.fullAt.sub(Q.of(nowMs));
    if (missing.cmp(Q.of(0)) <= 0) return Q.of(this.count);
    return Q.of(this.count).sub(missing.mul(Q.ratio(this.count, this.perMs)));
  }

  tokens(nowMs: number): number {
    return this.level(nowMs).toNumber();
  }

  canTake(nowMs: number): boolean {
    return this.level(nowMs).cmp(Q.of(1)) >= 0;
  }

  take(nowMs: number): void {
    if (!this.canTake(nowMs)) throw new Error("reference: taking from a bucket without a token");
    this.fullAt = this.fullAt.max(Q.of(nowMs)).add(this.tokenMs);
  }

  /** The first whole ms at which a token is there. */
  nextAtMs(nowMs: number): number {
    if (this.canTake(nowMs)) return nowMs;
    return this.fullAt.sub(Q.of(this.count - 1).mul(this.tokenMs)).ceil();
  }

  /** The same tokens under a new rate, capped at its count. */
  resize(rate: Rate, nowMs: number): void {
    const level = this.level(nowMs);
    const capped = level.cmp(Q.of(rate.count)) > 0 ? Q.of(rate.count) : level;
    this.count = rate.count;
    this.perMs = rate.perMs;
    this.fullAt = Q.of(nowMs).add(Q.of(rate.count).sub(capped).mul(this.tokenMs));
  }
}

/** What may hold a scope back by its rate, and its pending refill event (one per group or topic object). */
class RateHold {
  held = false;
  refillAtMs: number | null = null;
  refillGen = 0;
}

/** One group object: made when the group is first named, gone when forgotten or its topic is dropped. */
export class RefGroup {
  v = 0;
  inS = false;
  readonly rate = new RateHold();
  constructor(readonly name: GroupName) {}
}

type Scope = { kind: "topic" } | { kind: "group"; group: GroupName };

function scopeKey(scope: Scope): string {
  return scope.kind === "topic" ? topicKey : scope.group === null ? nilKey : scope.group;
}

interface RefEvent {
  atMs: number;
  seq: number;
  run: () => void;
}

export class RefTopic {
  /** Live items (ended ones leave). */
  readonly items = new Map<string, RefItem>();
  own: RefPolicy | null = null;
  star: RefPolicy | null = null;
  readonly named = new Map<string, RefPolicy>();
  /** Paused groups: the pause's end (null: until resume) and its number. */
  readonly pauses = new Map<string, { untilMs: number | null; gen: number }>();
  /** Rate buckets by scope key (they outlive groups and the topic's object). */
  readonly buckets = new Map<string, RefBucket>();
  /** When the topic's policies were read back at a restart (null: none were, or every one was cleared since). */
  loadedAtMs: number | null = null;
  // ---- the rotation: reset when it starts, at a restart, and when the topic is dropped ----
  rotating = false;
  nil = new RefGroup(null);
  /** The named groups' objects, in the order they were made. */
  objects = new Map<string, RefGroup>();
  lingering: RefGroup[] = [];
  lastLeastV = 0;
  /** The topic object's own rate hold. */
  topicRate = new RateHold();

  constructor(
    readonly model: RefModel,
    readonly name: string,
  ) {}

  // ---- policies and buckets ----

  get hasPolicies(): boolean {
    return this.own !== null || this.star !== null || this.named.size > 0;
  }

  get hasGroupPolicies(): boolean {
    return this.star !== null || this.named.size > 0;
  }

  policyOf(group: GroupName): RefPolicy | null {
    if (group !== null) {
      const own = this.named.get(group);
      if (own !== undefined) return own;
    }
    return this.star;
  }

  weightOf(group: GroupName): number {
    return this.policyOf(group)?.weight ?? 1;
  }

  maxLeasedOf(group: GroupName): number | null {
    return this.policyOf(group)?.maxLeased ?? null;
  }

  rateOf(scope: Scope): Rate | null {
    if (scope.kind === "topic") return this.own?.rate ?? null;
    return this.policyOf(scope.group)?.rate ?? null;
  }

  /** Read the scope's bucket now: made (full, or empty at the restart instant), following a changed rate, or dropped when no rate binds. */
  bucket(scope: Scope, nowMs: number): RefBucket | null {
    const rate = this.rateOf(scope);
    const key = scopeKey(scope);
    if (rate === null) {
      this.buckets.delete(key);
      return null;
    }
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      const loadedAtMs = this.loadedAtMs;
      bucket = loadedAtMs !== null && nowMs - loadedAtMs < rate.perMs ? RefBucket.emptiedAt(rate, loadedAtMs) : RefBucket.full(rate, nowMs);
      this.buckets.set(key, bucket);
    } else if (bucket.count !== rate.count || bucket.perMs !== rate.perMs) {
      bucket.resize(rate, nowMs);
    }
    return bucket;
  }

  /** Hold a group (object) or the topic by its rate until its next token. */
  private holdByRate(scope: Scope, hold: RateHold, group: RefGroup | null, bucket: RefBucket, nowMs: number): void {
    hold.held = true;
    if (group !== null) this.update(group);
    this.scheduleRefill(scope, hold, group, bucket.nextAtMs(nowMs));
  }

  /** One refill event per object; one left from a slower rate is brought forward. */
  private scheduleRefill(scope: Scope, hold: RateHold, group: RefGroup | null, atMs: number): void {
    if (hold.refillAtMs !== null && hold.refillAtMs <= atMs) return;
    hold.refillAtMs = atMs;
    const gen = ++hold.refillGen;
    this.model.schedule(atMs, () => {
      if (hold.refillGen !== gen) return;
      hold.refillAtMs = null;
      if (!hold.held) return;
      const nowMs = this.model.nowMs;
      const bucket = this.bucket(scope, nowMs);
      if (bucket !== null && !bucket.canTake(nowMs)) {
        this.scheduleRefill(scope, hold, group, bucket.nextAtMs(nowMs));
        return;
      }
      hold.held = false;
      if (group !== null) this.update(group);
    });
  }

  /** A group's policy is read again (a policy change, a group made): its bucket follows, its rate hold is lifted (found again by the next pick). */
  applyPolicy(group: RefGroup, nowMs: number): void {
    this.bucket({ kind: "group", group: group.name }, nowMs);
    group.rate.held = false;
    this.update(group);
  }

  /** The topic's own policy is read again. */
  applyOwnPolicy(nowMs: number): void {
    this.bucket({ kind: "topic" }, nowMs);
    this.topicRate.held = false;
  }

  // ---- groups, S and v ----

  /** The group's object, if it has one now. */
  get(name: GroupName): RefGroup | undefined {
    return name === null ? this.nil : this.objects.get(name);
  }

  /** The named group's object, made (and the rotation started) when it has none: a group comes back at the least v. */
  ensure(name: string, nowMs: number): RefGroup {
    this.startRotation();
    let group = this.objects.get(name);
    if (group === undefined) {
      group = new RefGroup(name);
      group.v = this.leastV();
      this.objects.set(name, group);
      this.applyPolicy(group, nowMs);
    }
    return group;
  }

  /** The rotation starts: every v and L from 0, the nil group (its items so far) in it as any group. */
  startRotation(): void {
    if (this.rotating) return;
    this.rotating = true;
    this.resetRotation();
    this.update(this.nil);
  }

  private resetRotation(): void {
    this.nil = new RefGroup(null);
    this.objects = new Map();
    this.lingering = [];
    this.lastLeastV = 0;
  }

  itemsOf(name: GroupName): RefItem[] {
    return [...this.items.values()].filter((it) => it.group === name);
  }

  private hasItems(name: GroupName): boolean {
    for (const it of this.items.values()) if (it.group === name) return true;
    return false;
  }

  leasedOf(name: GroupName): number {
    let n = 0;
    for (const it of this.items.values()) if (it.group === name && it.state === "leased") n++;
    return n;
  }

  get leased(): number {
    let n = 0;
    for (const it of this.items.values()) if (it.state === "leased") n++;
    return n;
  }

  get anyReady(): boolean {
    for (const it of this.items.values()) if (it.state === "ready") return true;
    return false;
  }

  /** The group's best ready item (that a worker with or without gpu may take, when `gpu` is given). */
  bestOf(name: GroupName, gpu: boolean | null = null): RefItem | null {
    let best: RefItem | null = null;
    for (const it of this.items.values()) {
      if (it.group !== name || it.state !== "ready") continue;
      if (gpu === false && it.gpu) continue;
      if (best === null || orderLess(it, best)) best = it;
    }
    return best;
  }

  /** Whether a pause or a bound holds the group back now (its rate as far as it is known: see RateHold). */
  held(group: RefGroup): boolean {
    const name = group.name;
    if (name !== null && this.pauses.has(name)) return true;
    const max = this.maxLeasedOf(name);
    if (max !== null && this.leasedOf(name) >= max) return true;
    return group.rate.held;
  }

  /** Whether the topic's own bounds hold back every delivery now. */
  topicHeld(): boolean {
    const max = this.own?.maxLeased ?? null;
    if (max !== null && this.leased >= max) return true;
    return this.topicRate.held;
  }

  private *inRotation(): Iterable<RefGroup> {
    if (this.nil.inS) yield this.nil;
    for (const g of this.objects.values()) if (g.inS) yield g;
  }

  leastV(): number {
    let least: number | null = null;
    for (const g of this.inRotation()) if (least === null || g.v < least) least = g.v;
    return least ?? this.lastLeastV;
  }

  /** The group enters or leaves S as its ready items, bounds and pause say. */
  update(group: RefGroup): void {
    // An object gone (forgotten, or its topic dropped) is in no rotation.
    if (group.name === null ? group !== this.nil : this.objects.get(group.name) !== group) return;
    const belongs = !this.held(group) && this.bestOf(group.name) !== null;
    if (belongs && !group.inS) {
      const least = this.leastV();
      if (group.v < least) group.v = least;
      group.inS = true;
      this.forgetSome();
    } else if (!belongs && group.inS) {
      group.inS = false;
      if (this.inRotation()[Symbol.iterator]().next().done === true) this.lastLeastV = group.v;
    }
  }

  updateByName(name: GroupName): void {
    const group = this.get(name);
    if (group !== undefined) this.update(group);
  }

  /** Whether an empty group may be forgotten now. */
  private forgettable(group: RefGroup): boolean {
    return group.name !== null && !this.hasItems(group.name) && !this.pauses.has(group.name) && !group.inS && group.v <= this.leastV();
  }

  private forget(group: RefGroup): void {
    if (group.name !== null && this.objects.get(group.name) === group) this.objects.delete(group.name);
  }

  /** The group's last item ended (or its pause was lifted with none left): forget it, or let it linger. */
  emptied(group: RefGroup): void {
    if (this.forgettable(group)) this.forget(group);
    else if (group.name !== null && !this.pauses.has(group.name)) this.lingering.push(group);
  }

  /** Look at two lingering groups (as a group enters S). */
  private forgetSome(): void {
    for (let n = 0; n < 2 && this.lingering.length > 0; n++) {
      const group = this.lingering.shift() as RefGroup;
      if (group.name === null || this.objects.get(group.name) !== group) continue;
      if (this.hasItems(group.name) || this.pauses.has(group.name)) continue;
      if (group.v <= this.leastV()) this.forget(group);
      else this.lingering.push(group);
    }
  }

  /**
   * The next delivery to a worker (with the gpu capability or without):
   * among the groups of S holding an item it may take, the best priority,
   * then the least v, then delivery order; or null.
   */
  pick(gpu: boolean): { group: RefGroup; item: RefItem } | null {
    let best: { group: RefGroup; item: RefItem } | null = null;
    for (const g of this.inRotation()) {
      const item = this.bestOf(g.name, gpu);
      if (item === null) continue;
      if (best === null || rotationLess(item, g.v, best.item, best.group.v)) best = { group: g, item };
    }
    return best;
  }

  /** Whether a dequeue reads the topic's bounds at all (it has policies, or rotates). */
  get bounded(): boolean {
    return this.hasPolicies || this.rotating;
  }

  /** A dequeue meets the topic: false when its bounds hold it back (a dry bucket found now holds it). */
  open(nowMs: number): boolean {
    if (!this.bounded) return true;
    if (this.topicHeld()) return false;
    const bucket = this.bucket({ kind: "topic" }, nowMs);
    if (bucket === null || bucket.canTake(nowMs)) return true;
    this.holdByRate({ kind: "topic" }, this.topicRate, null, bucket, nowMs);
    return false;
  }

  /** A pick's group may deliver: false when its bucket is dry (it is held now, and the dequeue picks again). */
  admits(group: RefGroup, nowMs: number): boolean {
    if (!this.bounded || !this.rotating || !this.hasPolicies) return true;
    const scope: Scope = { kind: "group", group: group.name };
    const bucket = this.bucket(scope, nowMs);
    if (bucket === null || bucket.canTake(nowMs)) return true;
    this.holdByRate(scope, group.rate, group, bucket, nowMs);
    return false;
  }

  /** A delivery from `group` (its item already leased): tokens taken, v moved on, S looked at again. */
  delivered(group: RefGroup, nowMs: number): void {
    if (!this.bounded) return;
    const topicBucket = this.hasPolicies ? this.bucket({ kind: "topic" }, nowMs) : null;
    if (topicBucket !== null) {
      topicBucket.take(nowMs);
      if (!topicBucket.canTake(nowMs)) this.holdByRate({ kind: "topic" }, this.topicRate, null, topicBucket, nowMs);
    }
    if (!this.rotating) return;
    const vBefore = group.v;
    group.v += 1 / this.weightOf(group.name);
    const scope: Scope = { kind: "group", group: group.name };
    const groupBucket = this.hasPolicies ? this.bucket(scope, nowMs) : null;
    if (groupBucket !== null) {
      groupBucket.take(nowMs);
      if (!groupBucket.canTake(nowMs)) this.holdByRate(scope, group.rate, group, groupBucket, nowMs);
    }
    this.update(group);
    if (this.model.options.lastLeastV === "pre" && !group.inS && this.inRotation()[Symbol.iterator]().next().done === true) this.lastLeastV = vBefore;
  }

  // ---- the topic's object ----

  /** The topic exists (in the engine's sense): it holds an item (dead letters too) or a paused group. */
  get exists(): boolean {
    return this.items.size > 0 || this.pauses.size > 0;
  }

  /** The topic is made again (by an enqueue or a pause while it did not exist): it rotates at once if it has group policies. */
  made(): void {
    if (this.hasGroupPolicies) this.startRotation();
  }

  /** A topic that no longer exists is dropped: its rotation, its groups and its own hold go with it (its buckets stay). */
  maybeDrop(): void {
    if (this.exists) return;
    this.rotating = false;
    this.resetRotation();
    this.topicRate = new RateHold();
  }

  /** A restart: v, L, holds and buckets are memory only; groups are made again as items and pauses load. */
  restart(nowMs: number): void {
    this.rotating = false;
    this.resetRotation();
    this.topicRate = new RateHold();
    this.buckets.clear();
    this.loadedAtMs = this.hasPolicies ? nowMs : null;
  }
}

/** Delivery order of two items. */
export function orderLess(a: RefItem, b: RefItem): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  if (a.deliverAtMs !== b.deliverAtMs) return a.deliverAtMs < b.deliverAtMs;
  return a.seq < b.seq;
}

/** Rotation order of two groups' best items: priority, then the groups' v, then delivery order. */
function rotationLess(a: RefItem, av: number, b: RefItem, bv: number): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  if (av !== bv) return av < bv;
  return orderLess(a, b);
}

export class RefModel {
  readonly topics = new Map<string, RefTopic>();
  /** Every item ever enqueued (ended ones keep their outcome). */
  readonly items = new Map<string, RefItem>();
  nowMs: number;
  private events: RefEvent[] = [];
  private seq = 0;
  /** Numbers every pause, so an old pause's end never ends a newer one. */
  private pauseGen = 0;

  constructor(
    nowMs: number,
    readonly options: RefOptions,
  ) {
    this.nowMs = nowMs;
  }

  topic(name: string): RefTopic {
    let topic = this.topics.get(name);
    if (topic === undefined) {
      topic = new RefTopic(this, name);
      this.topics.set(name, topic);
    }
    return topic;
  }

  schedule(atMs: number, run: () => void): void {
    this.events.push({ atMs, seq: this.seq++, run });
  }

  /** Run every event due at nowMs, in time order (ties: the one scheduled first). */
  advance(nowMs: number): void {
    this.nowMs = nowMs;
    for (;;) {
      let at = -1;
      for (let i = 0; i < this.events.length; i++) {
        const e = this.events[i] as RefEvent;
        if (e.atMs > nowMs) continue;
        const best = at < 0 ? null : (this.events[at] as RefEvent);
        if (best === null || e.atMs < best.atMs || (e.atMs === best.atMs && e.seq < best.seq)) at = i;
      }
      if (at < 0) return;
      const [event] = this.events.splice(at, 1);
      (event as RefEvent).run();
    }
  }

  // ---- items ----

  /** One item of an enqueue (an enqueue's items come in request order). */
  enqueue(input: { id: string; seq: number; topic: string; group: GroupName; priority: number; gpu: boolean; delayMs: number; leaseMs: number; delivery: RefItem["delivery"]; maxAttempts: number }): void {
    const topic = this.topic(input.topic);
    if (!topic.exists) topic.made();
    if (input.group !== null) topic.ensure(input.group, this.nowMs);
    const it: RefItem = {
      id: input.id,
      seq: input.seq,
      topic: input.topic,
      group: input.group,
      priority: input.priority,
      gpu: input.gpu,
      deliverAtMs: this.nowMs + input.delayMs,
      leaseMs: input.leaseMs,
      delivery: input.delivery,
      maxAttempts: input.maxAttempts,
      attempt: 0,
      state: "ready",
      leaseExpiresAtMs: 0,
      timerGen: 0,
      outcome: null,
    };
    this.items.set(it.id, it);
    topic.items.set(it.id, it);
    this.placePending(it);
  }

  /** Delayed (with its due event) or ready. */
  private placePending(it: RefItem): void {
    if (it.deliverAtMs > this.nowMs) {
      it.state = "delayed";
      this.scheduleDue(it);
    } else {
      it.state = "ready";
    }
    this.topic(it.topic).updateByName(it.group);
  }

  private scheduleDue(it: RefItem): void {
    const gen = ++it.timerGen;
    this.schedule(it.deliverAtMs, () => {
      if (it.timerGen !== gen || it.state !== "delayed") return;
      it.state = "ready";
      this.topic(it.topic).updateByName(it.group);
    });
  }

  private scheduleLeaseEnd(it: RefItem): void {
    const gen = ++it.timerGen;
    this.schedule(it.leaseExpiresAtMs, () => {
      if (it.timerGen !== gen || it.state !== "leased") return;
      if (it.delivery === "at_most_once") this.end(it, "expired");
      else if (it.attempt >= it.maxAttempts) this.kill(it);
      else this.placePending(it);
    });
  }

  /** What a dequeue of these topics by a worker with or without gpu delivers now, leasing each. */
  dequeue(wants: Array<{ topic: string; count: number }>, leaseMs: number | null, gpu: boolean): Delivered[] {
    const out: Delivered[] = [];
    const nowMs = this.nowMs;
    for (const want of wants) {
      const topic = this.topics.get(want.topic);
      if (topic === undefined || !topic.anyReady) continue;
      if (!topic.open(nowMs)) continue;
      for (let n = 0; n < want.count; n++) {
        if (topic.bounded && topic.topicHeld()) break;
        const picked = topic.pick(gpu);
        if (picked === null) break;
        const { group, item: it } = picked;
        if (!topic.admits(group, nowMs)) {
          n--;
          continue;
        }
        it.state = "leased";
        it.attempt++;
        it.leaseExpiresAtMs = nowMs + (leaseMs ?? it.leaseMs);
        this.scheduleLeaseEnd(it);
        topic.delivered(group, nowMs);
        topic.update(group);
        out.push({ id: it.id, topic: it.topic, group: it.group, attempt: it.attempt, leaseExpiresAtMs: it.leaseExpiresAtMs });
      }
    }
    return out;
  }

  end(it: RefItem, outcome: string): void {
    it.state = "ended";
    it.outcome = outcome;
    it.timerGen++;
    const topic = this.topic(it.topic);
    topic.items.delete(it.id);
    const group = topic.get(it.group);
    if (group !== undefined) {
      topic.update(group);
      if (it.group !== null && topic.itemsOf(it.group).length === 0) topic.emptied(group);
    }
    topic.maybeDrop();
  }

  kill(it: RefItem): void {
    it.state = "dead";
    it.timerGen++;
    this.topic(it.topic).updateByName(it.group);
  }

  ack(it: RefItem): void {
    this.end(it, "acked");
  }

  /** Ready again after delayMs, or a dead letter at its last attempt. */
  nack(it: RefItem, delayMs: number): void {
    if (it.attempt >= it.maxAttempts) {
      this.kill(it);
      return;
    }
    it.deliverAtMs = this.nowMs + delayMs;
    this.placePending(it);
  }

  cancel(it: RefItem): void {
    this.end(it, "cancelled");
  }

  // ---- policies and pauses ----

  /** Set (or with null clear) a policy; it acts at once on the topic and its live groups (the others read it when next made). */
  setPolicy(topicName: string, group: string | null, policy: RefPolicy | null): void {
    const topic = this.topic(topicName);
    const nowMs = this.nowMs;
    const had = group === null ? topic.own : group === "*" ? topic.star : (topic.named.get(group) ?? null);
    // Clearing a policy that is not there changes nothing.
    if (policy === null && had === null) return;
    if (group === null) topic.own = policy;
    else if (group === "*") topic.star = policy;
    else if (policy === null) topic.named.delete(group);
    else topic.named.set(group, policy);
    // With no policy left the topic's policies go, with their buckets and their restart instant.
    if (!topic.hasPolicies) {
      topic.loadedAtMs = null;
      topic.buckets.clear();
    }
    if (!topic.exists) return;
    if (group === null) {
      if (topic.hasPolicies) topic.applyOwnPolicy(nowMs);
      else topic.topicRate.held = false;
      return;
    }
    if (!topic.hasGroupPolicies && !topic.rotating) return;
    topic.startRotation();
    if (group === "*") {
      topic.applyPolicy(topic.nil, nowMs);
      // Live iteration: a group forgotten meanwhile (an entry looks at lingering ones) is not read.
      for (const each of topic.objects.values()) topic.applyPolicy(each, nowMs);
    } else {
      const named = topic.objects.get(group);
      if (named !== undefined) topic.applyPolicy(named, nowMs);
    }
  }

  pause(topicName: string, group: string, forMs: number | null): number | null {
    const topic = this.topic(topicName);
    if (!topic.exists) topic.made();
    const object = topic.ensure(group, this.nowMs);
    const untilMs = forMs === null ? null : this.nowMs + forMs;
    const gen = ++this.pauseGen;
    topic.pauses.set(group, { untilMs, gen });
    if (untilMs !== null) this.schedulePauseEnd(topic, group, untilMs, gen);
    topic.update(object);
    return untilMs;
  }

  private schedulePauseEnd(topic: RefTopic, group: string, untilMs: number, gen: number): void {
    this.schedule(untilMs, () => {
      if (topic.pauses.get(group)?.gen !== gen) return;
      this.lift(topic, group);
    });
  }

  private lift(topic: RefTopic, group: string): void {
    topic.pauses.delete(group);
    const object = topic.get(group);
    if (object !== undefined) {
      topic.update(object);
      if (topic.itemsOf(group).length === 0) topic.emptied(object);
    }
    topic.maybeDrop();
  }

  resume(topicName: string, group: string): boolean {
    const topic = this.topic(topicName);
    if (!topic.pauses.has(group)) return false;
    this.lift(topic, group);
    return true;
  }

  /**
   * A restart: durable state stays (items in their states with their leases
   * and delays, policies, pauses); the rest starts over as a recovery builds
   * it: topics and groups made as their items load (by shard and key), each
   * item's timer scheduled, then the pauses.
   */
  restart(): void {
    this.events = [];
    const nowMs = this.nowMs;
    for (const topic of this.topics.values()) topic.restart(nowMs);
    const shardOf = (it: RefItem) => Number(it.id.split(":")[0]);
    const live = [...this.items.values()].filter((it) => it.state !== "ended").sort((a, b) => shardOf(a) - shardOf(b) || a.seq - b.seq);
    for (const it of live) {
      const topic = this.topic(it.topic);
      if (topic.hasGroupPolicies) topic.startRotation();
      if (it.group !== null) topic.ensure(it.group, nowMs);
    }
    for (const it of live) {
      if (it.state === "leased") this.scheduleLeaseEnd(it);
      else if (it.state === "delayed") this.scheduleDue(it);
      this.topic(it.topic).updateByName(it.group);
    }
    for (const topic of this.topics.values()) {
      for (const [group, pause] of topic.pauses) {
        if (topic.hasGroupPolicies) topic.startRotation();
        const object = topic.ensure(group, nowMs);
        const gen = ++this.pauseGen;
        topic.pauses.set(group, { untilMs: pause.untilMs, gen });
        if (pause.untilMs !== null) this.schedulePauseEnd(topic, group, pause.untilMs, gen);
        topic.update(object);
      }
    }
  }
}
