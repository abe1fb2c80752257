// Paused groups: `pause` and `resume` with `group`, the end of a timed group
// pause, and loading them at start. A paused group keeps every item and every
// state change; only its deliveries stop: it leaves the rotation
// (group-rotation.ts), so the topic's other groups go on, and it comes back
// (as any group entering the rotation does) when the pause ends. The group
// lives while paused, even with no items, and so does its topic.
//
// Durable like a topic's pause (storage: PauseRecord with its group), and in
// cluster mode shared through the same poll (applyStored, writing).

import { UnsettledWrites } from "../state/unsettled-writes.ts";
import { assert } from "../../lib/assert.ts";
import type { PauseRecord } from "../../storage/record.ts";
import { pauseKey } from "../../storage/store.ts";
import type { Reply, Result } from "../api.ts";
import { newTopicRefusal } from "../admission/capacity.ts";
import { atTopic } from "../failures/failure-location.ts";
import { fail } from "../failures/failures.ts";
import type { LiveItem } from "../state/item.ts";
import type { ItemStates } from "../state/item-states.ts";
import { finishOp, type OpContext } from "../ops/op-context.ts";
import type { Topic } from "../ready/topic.ts";
import { Deadline, DeadlineKind } from "../time/deadlines.ts";
import type { EngineDeadlines } from "../time/engine-deadlines.ts";
import { type Group, GroupPause, Held } from "./group.ts";

export class GroupPauses {
  /** Groups paused now, over every topic (bounded by limits.pausedTopicsMax, shared with topics' pauses). */
  private pausedCount = 0;
  /** This engine's writes of these records whose commit has not settled, by key. */
  private readonly writesUnsettled: UnsettledWrites;

  constructor(
    private readonly states: ItemStates,
    private readonly deadlines: EngineDeadlines,
    /** Cluster mode: a resume of a group not paused here still writes its delete. */
    private readonly resumeUnseen = false,
  ) {
    this.writesUnsettled = new UnsettledWrites((hook) => states.afterCommit(hook));
  }

  get size(): number {
    return this.pausedCount;
  }

  pause(ctx: OpContext, nsName: string, topicName: string, groupName: string, forMs: number | null, pausedTopics: number, nowMs: number): Result<Reply<{ pausedUntilMs: number | null }>> {
    const states = this.states;
    const existing = states.namespaces.get(nsName)?.topics.get(topicName);
    const group = existing?.rotation?.named.get(groupName);
    if ((group === undefined || group.pause === null) && this.pausedCount + pausedTopics >= states.limits.pausedTopicsMax) {
      return fail("over_limit", `the server already holds ${states.limits.pausedTopicsMax} paused topics and groups (paused_topics_max)`, { at: atTopic });
    }
    const refused = existing === undefined ? newTopicRefusal(states, nsName, topicName) : null;
    if (refused !== null) return refused;
    const untilMs = forMs === null ? null : nowMs + forMs;
    const topic = existing ?? states.namespace(nsName, nowMs).topic(topicName);
    this.place(topic, topic.group(groupName), untilMs);
    this.write(nsName, topicName, groupName, { ns: nsName, topic: topicName, group: groupName, untilMs });
    return finishOp(ctx, { pausedUntilMs: untilMs }, nowMs);
  }

  resume(ctx: OpContext, nsName: string, topicName: string, groupName: string, nowMs: number): Result<Reply<{ resumed: boolean }>> {
    const topic = this.states.namespaces.get(nsName)?.topics.get(topicName);
    const pause = topic?.rotation?.named.get(groupName)?.pause ?? null;
    if (pause === null) {
      if (!this.resumeUnseen) return { ok: true, value: { value: { resumed: false }, durable: null } };
      this.write(nsName, topicName, groupName, null);
      return finishOp(ctx, { resumed: false }, nowMs);
    }
    this.lift(topic as Topic<LiveItem>, pause, true);
    return finishOp(ctx, { resumed: true }, nowMs);
  }

  /** A group's pause now: its end (null: until resume), or undefined when not paused. */
  pausedUntil(nsName: string, topicName: string, groupName: string): number | null | undefined {
    const pause = this.states.namespaces.get(nsName)?.topics.get(topicName)?.rotation?.named.get(groupName)?.pause;
    return pause === null || pause === undefined ? undefined : pause.untilMs;
  }

  writing(nsName: string, topicName: string, groupName: string): boolean {
    return this.writesUnsettled.has(pauseKey(nsName, topicName, groupName));
  }

  /** Cluster mode: another node committed this group's pause (or its end: undefined); change this engine to match, writing nothing. */
  applyStored(nsName: string, topicName: string, groupName: string, untilMs: number | null | undefined, nowMs: number): void {
    const states = this.states;
    const existing = states.namespaces.get(nsName)?.topics.get(topicName);
    const pause = existing?.rotation?.named.get(groupName)?.pause ?? null;
    if (untilMs === undefined) {
      if (pause !== null) this.lift(existing as Topic<LiveItem>, pause, false);
      return;
    }
    if (pause !== null && pause.untilMs === untilMs) return;
    const topic = existing ?? states.namespace(nsName, nowMs).topic(topicName);
    this.place(topic, topic.group(groupName), untilMs);
  }

  /** The timed pause's deadline came (inside a tick). */
  end(pause: GroupPause<LiveItem>): void {
    pause.node = null;
    if (pause.group.pause !== pause) return;
    this.lift(pause.topic as Topic<LiveItem>, pause, true);
  }

  /** Install the stored group pauses at start. */
  load(records: Iterable<PauseRecord>, nowMs: number): void {
    for (const record of records) {
      if (record.group === null) continue;
      const topic = this.states.namespace(record.ns, nowMs).topic(record.topic);
      const group = topic.group(record.group);
      if (group.pause !== null) continue;
      this.place(topic, group, record.untilMs);
    }
  }

  checkInvariants(): void {
    let paused = 0;
    for (const ns of this.states.namespaces.values()) {
      for (const topic of ns.topics.values()) {
        let inTopic = 0;
        for (const group of topic.rotation?.named.values() ?? []) {
          if (group.pause === null) continue;
          inTopic++;
          assert((group.held & Held.paused) !== 0, `group ${String(group.name)} paused but not held`);
          assert((group.pause.untilMs === null) === (group.pause.node === null), `pause of group ${String(group.name)}: deadline out of step`);
        }
        assert(inTopic === topic.pausedGroups, `topic ${topic.name}: ${topic.pausedGroups} paused groups counted, ${inTopic} found`);
        paused += inTopic;
      }
    }
    assert(paused === this.pausedCount, `group pauses: ${this.pausedCount} counted, ${paused} found`);
  }

  private place(topic: Topic<LiveItem>, group: Group<LiveItem>, untilMs: number | null): void {
    let pause = group.pause;
    if (pause === null) {
      pause = new GroupPause<LiveItem>(topic, group, untilMs);
      group.pause = pause;
      group.held |= Held.paused;
      topic.pausedGroups++;
      this.pausedCount++;
      topic.rotation?.place(group);
    } else {
      this.cancelDeadline(pause);
      pause.untilMs = untilMs;
    }
    if (untilMs !== null) pause.node = this.deadlines.schedule(new Deadline(untilMs, DeadlineKind.GroupPauseEnd, pause));
  }

  private lift(topic: Topic<LiveItem>, pause: GroupPause<LiveItem>, write: boolean): void {
    const group = pause.group;
    this.cancelDeadline(pause);
    group.pause = null;
    group.held &= ~Held.paused;
    topic.pausedGroups--;
    this.pausedCount--;
    if (write) this.write(topic.ns, topic.name, group.name as string, null);
    const rotation = topic.rotation;
    if (rotation !== null) {
      rotation.place(group);
      if (group.items === 0) {
        if (rotation.forgettable(group)) rotation.forget(group);
        else rotation.linger(group);
      }
    }
    this.states.pauseLifted(topic);
  }

  private write(nsName: string, topicName: string, groupName: string, record: PauseRecord | null): void {
    const states = this.states;
    if (record === null) states.ws().deletePause(nsName, topicName, groupName);
    else states.ws().putPause(record);
    const key = pauseKey(nsName, topicName, groupName);
    this.writesUnsettled.add(key);
  }

  private cancelDeadline(pause: GroupPause<LiveItem>): void {
    if (pause.node === null) return;
    if (pause.node.inHeap) this.deadlines.cancel(pause.node);
    pause.node = null;
  }
}
