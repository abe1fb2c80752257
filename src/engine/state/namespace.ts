// One namespace: its topics (created on first use, dropped when empty and not
// paused, listed in byte order of name), its counters, and its enqueue quota;
// and the map of every namespace, which counts the topics of all of them as
// they appear and vanish, so the topics maximum costs nothing to check.

import type { Limits } from "../../limits.ts";
import type { QuotaBucket } from "../admission/quota.ts";
import type { LiveItem } from "./item.ts";
import { Topic } from "../ready/topic.ts";
import { PolicyTable } from "../groups/policy-table.ts";
import type { NamespaceCounters } from "../reads/stats-shape.ts";

export type { NamespaceCounters } from "../reads/stats-shape.ts";

/** Compare strings by code point, which is the byte order of their UTF-8 form. */
function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (0xD800-0xDFFF) encode code points above 0xFFFF: they sort after every other BMP unit.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** What others may read of the namespaces (ItemStates.namespaces): lookups and counts; a namespace is created only by ItemStates.namespace. */
export interface ReadonlyNamespaceMap extends ReadonlyMap<string, Namespace> {
  readonly topicCount: number;
  readonly policies: PolicyTable;
}

/** The namespaces by name, how many topics they hold in all (limits.topicsMax), and every topic's policies (which outlive topics). */
export class NamespaceMap extends Map<string, Namespace> {
  topicCount = 0;
  readonly policies = new PolicyTable();
}

export class Namespace {
  readonly topics = new Map<string, Topic<LiveItem>>();
  readonly counters: NamespaceCounters = { enqueued: 0, delivered: 0, acked: 0, nacked: 0, expired: 0, cancelled: 0, dead: 0, redriven: 0 };
  private sorted: string[] | null = null;

  constructor(
    readonly name: string,
    /** Its enqueue quota (null: none). */
    readonly bucket: QuotaBucket | null,
    /** The map it is filed in, which counts its topics with every other namespace's. */
    private readonly all: NamespaceMap,
  ) {}

  topic(name: string): Topic<LiveItem> {
    let topic = this.topics.get(name);
    if (topic === undefined) {
      topic = new Topic<LiveItem>(this.name, name);
      const policies = this.all.policies.of(this.name, name);
      if (policies !== null) {
        topic.policies = policies;
        if (policies.hasGroupPolicies) topic.startRotation();
      }
      this.topics.set(name, topic);
      this.all.topicCount++;
      this.sorted = null;
    }
    return topic;
  }

  /** Drop the topic if it holds nothing and is not paused (a paused topic lives while paused). */
  dropIfEmpty(topic: Topic<LiveItem>): void {
    if (topic.total === 0 && topic.pause === null && topic.pausedGroups === 0 && this.topics.get(topic.name) === topic) {
      this.topics.delete(topic.name);
      this.all.topicCount--;
      this.sorted = null;
    }
  }

  /** Topic names in byte order (cached until a topic appears or vanishes). */
  sortedNames(): string[] {
    if (this.sorted === null) this.sorted = [...this.topics.keys()].sort(compareCodePoints);
    return this.sorted;
  }

  /** A page of topics: names with `prefix`, strictly after `after`, at most `limit`. */
  page(prefix: string | null, after: string | null, limit: number, limits: Limits): { topics: Topic<LiveItem>[]; next: string | null } {
    const names = this.sortedNames();
    const max = Math.max(1, Math.min(limit, limits.topicsPageMax));
    let lo = 0;
    const start = after !== null ? after : prefix;
    if (start !== null) {
      let hi = names.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const c = compareCodePoints(names[mid] as string, start);
        if (c < 0 || (after !== null && c === 0)) lo = mid + 1;
        else hi = mid;
      }
    }
    const out: Topic<LiveItem>[] = [];
    let next: string | null = null;
    for (let i = lo; i < names.length; i++) {
      const name = names[i] as string;
      if (prefix !== null && !name.startsWith(prefix)) {
        if (compareCodePoints(name, prefix) > 0) break;
        continue;
      }
      if (out.length === max) {
        next = (out[out.length - 1] as Topic<LiveItem>).name;
        break;
      }
      out.push(this.topics.get(name) as Topic<LiveItem>);
    }
    return { topics: out, next };
  }
}
