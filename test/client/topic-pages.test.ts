// mergeTopicPages: cluster nodes' `topics` pages summed into one page whose
// `next` cursor never skips a topic some node has not listed yet. Checked
// against a model: paging through the merge with random page sizes must give
// exactly the per-topic sums of every node's whole list.

import { describe, expect, test } from "bun:test";
import { mergeTopicPages, type TopicPage } from "../../src/client/topic-pages.ts";
import type { TopicCounts } from "../../src/client/types.ts";

function counts(topic: string, ready: number, paused = false): TopicCounts {
  return { topic, ready, delayed: 0, waiting: 0, leased: 0, dead: 0, paused };
}

/** One node's page after `after`, at most `limit` topics, as a server answers. */
function nodePage(all: TopicCounts[], after: string | undefined, limit: number): TopicPage {
  const rest = all.filter((t) => after === undefined || t.topic > after);
  const topics = rest.slice(0, limit);
  return { topics, next: rest.length > limit ? topics[topics.length - 1]!.topic : null };
}

describe("mergeTopicPages", () => {
  test("sums a topic's counts across nodes and keeps a pause any node reports", () => {
    const merged = mergeTopicPages([
      { topics: [counts("a", 1), counts("b", 2)], next: null },
      { topics: [counts("b", 3, true)], next: null },
    ]);
    expect(merged.next).toBeNull();
    expect(merged.topics.map((t) => [t.topic, t.ready, t.paused])).toEqual([
      ["a", 1, false],
      ["b", 5, true],
    ]);
  });

  test("a node with more pages bounds the merged page, so no topic is skipped", () => {
    // Node 1 has more after "b"; node 2's "c" must wait for the next page, where node 1's "c" joins it.
    const merged = mergeTopicPages(
      [
        { topics: [counts("a", 1), counts("b", 1)], next: "b" },
        { topics: [counts("a", 1), counts("c", 1)], next: null },
      ],
      2,
    );
    expect(merged.topics.map((t) => t.topic)).toEqual(["a", "b"]);
    expect(merged.next).toBe("b");
  });

  test("paging through the merge gives every topic once with the whole sums (random nodes and page sizes)", () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
    for (let round = 0; round < 200; round++) {
      const nodes: TopicCounts[][] = Array.from({ length: 1 + Math.floor(random() * 4) }, () => []);
      const expected = new Map<string, number>();
      for (let i = 0; i < 30; i++) {
        const topic = `t${String(Math.floor(random() * 40)).padStart(2, "0")}`;
        const node = nodes[Math.floor(random() * nodes.length)]!;
        if (node.some((t) => t.topic === topic)) continue;
        const ready = 1 + Math.floor(random() * 9);
        node.push(counts(topic, ready));
        expected.set(topic, (expected.get(topic) ?? 0) + ready);
      }
      for (const node of nodes) node.sort((a, b) => (a.topic < b.topic ? -1 : 1));
      const limit = 1 + Math.floor(random() * 6);
      const seen = new Map<string, number>();
      let after: string | undefined;
      for (let page = 0; page < 100; page++) {
        const merged = mergeTopicPages(nodes.map((node) => nodePage(node, after, limit)), limit);
        expect(merged.topics.length).toBeLessThanOrEqual(limit);
        for (const t of merged.topics) {
          expect(seen.has(t.topic)).toBe(false);
          seen.set(t.topic, t.ready);
        }
        if (merged.next === null) break;
        after = merged.next;
      }
      expect(seen).toEqual(expected);
    }
  });
});
