// Paused topics: the `pause` and `resume` ops, the end of a timed pause, and
// loading pauses at start. A paused topic keeps every item and every state
// change (enqueue, ack, nack, expiry, TTL go on); only deliveries stop:
// dequeues skip it (dequeue.ts checks Topic.pause) and its new ready items do
// not wake parked dequeues. When the pause ends, by `resume` or by its
// deadline, the topic's parked dequeues are served at once.
//
// A pause is stored (storage: PauseRecord, one per topic) so it survives a
// restart; `pause` and `resume` reply once that write is durable. A timed
// pause ends through the one deadline heap (DeadlineKind.PauseEnd), so the
// engine keeps no timer; its record is deleted in the tick's background
// write, and a record whose end passed while the server was down ends at the
// first tick after start.
//
// Cluster mode (src/cluster/) shares pauses through the database: a pause or
// resume committed by another node arrives through applyStored, which
// changes this engine's state without writing it back; and a resume writes
// its delete even when this node has not seen the pause yet (another node may
// have set it within the last poll). While this engine's own pause write is
// on its way to the database, `writing` says so: the poll must not apply a
// row read before that write lands, or the write would land over an engine
// the poll just changed (pause-rows.ts).

import { UnsettledWrites } from "../state/unsettled-writes.ts";
import { assert } from "../../lib/assert.ts";
import type { PauseRecord } from "../../storage/record.ts";
import { pauseKey } from "../../storage/store.ts";
import type { Reply, Result } from "../api.ts";
import { Deadline, DeadlineKind } from "../time/deadlines.ts";
import { newTopicRefusal } from "../admission/capacity.ts";
import { atTopic } from "../failures/failure-location.ts";
import { fail } from "../failures/failures.ts";
import type { LiveItem } from "../state/item.ts";
import type { EngineDeadlines } from "../time/engine-deadlines.ts";
import type { ItemStates } from "../state/item-states.ts";
import { finishOp, type OpContext } from "./op-context.ts";
import { type Topic, TopicPause } from "../ready/topic.ts";

export class Pauses {
  /** Topics paused now (bounded by limits.pausedTopicsMax). */
  private pausedCount = 0;
  /** This engine's writes of these records whose commit has not settled, by key. */
  private readonly writesUnsettled: UnsettledWrites;

  constructor(
    private readonly states: ItemStates,
    /** The engine's deadline heap: a timed pause's end goes in here. */
    private readonly deadlines: EngineDeadlines,
    /** Cluster mode: a resume of a topic not paused here still writes its delete (the pause may be another node's, not seen yet). */
    private readonly resumeUnseen = false,
  ) {
    this.writesUnsettled = new UnsettledWrites((hook) => states.afterCommit(hook));
  }

  get size(): number {
    return this.pausedCount;
  }

  /**
   * Pause a topic for `forMs` (null: until resume), creating its entry when
   * it holds no items, so a pause can be set before items arrive. Pausing a
   * paused topic replaces its end.
   */
  pause(ctx: OpContext, nsName: string, topicName: string, forMs: number | null, nowMs: number, pausedGroups = 0): Result<Reply<{ pausedUntilMs: number | null }>> {
    const states = this.states;
    const existing = states.namespaces.get(nsName)?.topics.get(topicName);
    // Paused groups (groups/group-pauses.ts) count against the same limit.
    if ((existing === undefined || existing.pause === null) && this.pausedCount + pausedGroups >= states.limits.pausedTopicsMax) {
      return fail("over_limit", `the server already holds ${states.limits.pausedTopicsMax} paused topics and groups (paused_topics_max)`, { at: atTopic });
    }
    // A pause of a topic that holds nothing creates it, and maybe its namespace: both count (admission/capacity.ts).
    const refused = existing === undefined ? newTopicRefusal(states, nsName, topicName) : null;
    if (refused !== null) return refused;
    const untilMs = forMs === null ? null : nowMs + forMs;
    this.place(existing ?? states.namespace(nsName, nowMs).topic(topicName), untilMs);
    this.write(nsName, topicName, { ns: nsName, topic: topicName, group: null, untilMs });
    return finishOp(ctx, { pausedUntilMs: untilMs }, nowMs);
  }

  /** Lift a topic's pause; `resumed` false (and nothing written) when it was not paused. */
  resume(ctx: OpContext, nsName: string, topicName: string, nowMs: number): Result<Reply<{ resumed: boolean }>> {
    const topic = this.states.namespaces.get(nsName)?.topics.get(topicName);
    if (topic === undefined || topic.pause === null) {
      if (!this.resumeUnseen) return { ok: true, value: { value: { resumed: false }, durable: null } };
      this.write(nsName, topicName, null);
      return finishOp(ctx, { resumed: false }, nowMs);
    }
    this.lift(topic.pause, true);
    return finishOp(ctx, { resumed: true }, nowMs);
  }

  /** The pause of a topic now: its end (null: until resume), or undefined when it is not paused. */
  pausedUntil(nsName: string, topicName: string): number | null | undefined {
    const pause = this.states.namespaces.get(nsName)?.topics.get(topicName)?.pause;
    return pause === null || pause === undefined ? undefined : pause.untilMs;
  }

  /** Whether a pause write of this engine's for the topic is still on its way (its commit has not settled). */
  writing(nsName: string, topicName: string): boolean {
    return this.writesUnsettled.has(pauseKey(nsName, topicName));
  }

  /**
   * Cluster mode: another node committed this topic's pause (untilMs, null
   * for until resume) or its end (undefined). Change this engine to match,
   * writing nothing: the database already holds it. A pause over the
   * paused-topics limit is still taken (the limit was checked where it was set).
   */
  applyStored(nsName: string, topicName: string, untilMs: number | null | undefined, nowMs: number): void {
    const states = this.states;
    const existing = states.namespaces.get(nsName)?.topics.get(topicName);
    if (untilMs === undefined) {
      if (existing !== undefined && existing.pause !== null) this.lift(existing.pause, false);
      return;
    }
    if (existing !== undefined && existing.pause !== null && existing.pause.untilMs === untilMs) return;
    this.place(existing ?? states.namespace(nsName, nowMs).topic(topicName), untilMs);
  }

  /** Pause `topic` until `untilMs` (null: until resume): a new pause, or the topic's pause with its end replaced. */
  private place(topic: Topic<LiveItem>, untilMs: number | null): void {
    let pause = topic.pause;
    if (pause === null) {
      pause = new TopicPause(topic, untilMs);
      topic.pause = pause;
      this.pausedCount++;
    } else {
      this.cancelDeadline(pause);
      pause.untilMs = untilMs;
    }
    if (untilMs !== null) pause.node = this.deadlines.schedule(new Deadline(untilMs, DeadlineKind.PauseEnd, pause));
  }

  /** A timed pause's deadline came (inside a tick: the write joins the tick's background set). */
  end(pause: TopicPause<LiveItem>): void {
    pause.node = null;
    if (pause.topic.pause !== pause) return;
    this.lift(pause, true);
  }

  /** Install the stored pauses at start (before the first tick; a pause already over ends at that tick). */
  load(records: Iterable<PauseRecord>, nowMs: number): void {
    for (const record of records) {
      // Group pauses load in groups/group-pauses.ts.
      if (record.group !== null) continue;
      const topic = this.states.namespace(record.ns, nowMs).topic(record.topic);
      if (topic.pause !== null) continue;
      const pause = new TopicPause(topic, record.untilMs);
      topic.pause = pause;
      this.pausedCount++;
      if (record.untilMs !== null) pause.node = this.deadlines.schedule(new Deadline(record.untilMs, DeadlineKind.PauseEnd, pause));
    }
  }

  /** Every paused topic is marked on its Topic, and counted (tests call it). */
  checkInvariants(): void {
    let paused = 0;
    for (const ns of this.states.namespaces.values()) {
      for (const topic of ns.topics.values()) {
        const pause = topic.pause;
        if (pause === null) continue;
        paused++;
        assert(pause.topic === topic, `pause of ${topic.name} names another topic`);
        assert((pause.untilMs === null) === (pause.node === null), `pause of ${topic.name}: deadline out of step`);
      }
    }
    assert(paused === this.pausedCount, `pauses: ${this.pausedCount} counted, ${paused} found`);
  }

  /** The pause is over: forget it (and its record when `write`), serve the topic's parked dequeues, drop it if empty. */
  private lift(pause: TopicPause<LiveItem>, write: boolean): void {
    const topic = pause.topic;
    this.cancelDeadline(pause);
    topic.pause = null;
    this.pausedCount--;
    if (write) this.write(topic.ns, topic.name, null);
    this.states.pauseLifted(topic);
  }

  /** Write the topic's pause record (null: delete it) in the op's WriteSet, counted unsettled until its commit settles. */
  private write(nsName: string, topicName: string, record: PauseRecord | null): void {
    const states = this.states;
    if (record === null) states.ws().deletePause(nsName, topicName, null);
    else states.ws().putPause(record);
    const key = pauseKey(nsName, topicName);
    this.writesUnsettled.add(key);
  }

  private cancelDeadline(pause: TopicPause<LiveItem>): void {
    if (pause.node === null) return;
    if (pause.node.inHeap) this.deadlines.cancel(pause.node);
    pause.node = null;
  }
}
