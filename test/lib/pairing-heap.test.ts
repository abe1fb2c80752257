// Goal: the pairing heap pops in order at 1, 2 and many entries, removes and
// re-keys by handle, pairs a node's children in place (compactChildren)
// without changing the order, stays FIFO-stable on ties via the comparator, and agrees
// with a sorted array under a seeded random mix of operations.

import { describe, expect, test } from "bun:test";
import { HeapNode, PairingHeap } from "../../src/lib/pairing-heap.ts";
import { seededRandom } from "../support/seeded-random.ts";

type Entry = { k: number; seq: number };
const less = (a: Entry, b: Entry) => a.k < b.k || (a.k === b.k && a.seq < b.seq);

describe("PairingHeap", () => {
  test("empty", () => {
    const h = new PairingHeap<Entry>(less);
    expect(h.size).toBe(0);
    expect(h.peek()).toBeUndefined();
    expect(h.pop()).toBeUndefined();
    h.checkInvariants();
  });

  test("one entry", () => {
    const h = new PairingHeap<Entry>(less);
    const n = h.insert({ k: 5, seq: 0 });
    expect(h.size).toBe(1);
    expect(h.peek()?.k).toBe(5);
    h.remove(n);
    expect(h.size).toBe(0);
    expect(n.inHeap).toBe(false);
    h.checkInvariants();
  });

  test("two entries in both orders", () => {
    for (const [a, b] of [[1, 2], [2, 1]] as const) {
      const h = new PairingHeap<Entry>(less);
      h.insert({ k: a, seq: 0 });
      h.insert({ k: b, seq: 1 });
      h.checkInvariants();
      expect(h.pop()?.k).toBe(1);
      expect(h.pop()?.k).toBe(2);
      expect(h.pop()).toBeUndefined();
    }
  });

  test("many entries pop sorted; ties keep insertion order via the comparator", () => {
    const h = new PairingHeap<Entry>(less);
    const r = seededRandom(1);
    const all: Entry[] = [];
    for (let i = 0; i < 5000; i++) {
      const e = { k: Math.floor(r() * 50), seq: i };
      all.push(e);
      h.insert(e);
    }
    h.checkInvariants();
    all.sort((a, b) => (less(a, b) ? -1 : less(b, a) ? 1 : 0));
    for (const e of all) expect(h.pop()).toBe(e);
    expect(h.size).toBe(0);
  });

  test("remove by handle from the middle, decrease and update keys", () => {
    const h = new PairingHeap<Entry>(less);
    const nodes: Array<HeapNode<Entry>> = [];
    for (let i = 0; i < 100; i++) nodes.push(h.insert({ k: i, seq: i }));
    h.pop(); // builds structure
    const n50 = nodes[50] as HeapNode<Entry>;
    h.remove(n50);
    h.checkInvariants();
    expect(() => h.remove(n50)).toThrow();
    const n70 = nodes[70] as HeapNode<Entry>;
    n70.value.k = -1;
    h.decreased(n70);
    h.checkInvariants();
    expect(h.peek()).toBe(n70.value);
    n70.value.k = 1000;
    h.update(n70);
    h.checkInvariants();
    expect(h.peek()?.k).toBe(1);
    const out: number[] = [];
    for (let e = h.pop(); e !== undefined; e = h.pop()) out.push(e.k);
    expect(out.length).toBe(98);
    expect(out[out.length - 1]).toBe(1000);
    expect(out.includes(50)).toBe(false);
  });

  test("compactChildren pairs a node's children into one subtree; order, handles and size unchanged", () => {
    const r = seededRandom(7);
    const h = new PairingHeap<Entry>(less);
    const nodes: Array<HeapNode<Entry>> = [];
    for (let i = 0; i < 500; i++) nodes.push(h.insert({ k: Math.floor(r() * 50), seq: i }));
    // Compact every node's children, root first, then random ones (leaves and single children are left as they are).
    h.compactChildren(h.peekNode()!);
    const root = h.peekNode()!;
    expect(root.child).not.toBeNull();
    expect(root.child!.next).toBeNull();
    for (let i = 0; i < 200; i++) h.compactChildren(nodes[Math.floor(r() * nodes.length)]!);
    h.checkInvariants();
    expect(h.size).toBe(500);
    // Handles still work, and pops come out in order.
    h.remove(nodes[123]!);
    const popped: Entry[] = [];
    for (let e = h.pop(); e !== undefined; e = h.pop()) popped.push(e);
    const expected = nodes.map((n) => n.value).filter((e) => e.seq !== 123).sort((a, b) => a.k - b.k || a.seq - b.seq);
    expect(popped).toEqual(expected);
  });

  test("a million-deep chain does not overflow the stack", () => {
    const h = new PairingHeap<Entry>(less);
    // Descending inserts make the root's child list a million long.
    for (let i = 1_000_000; i > 0; i--) h.insert({ k: i, seq: i });
    expect(h.pop()?.k).toBe(1);
    expect(h.pop()?.k).toBe(2);
    expect(h.size).toBe(999_998);
  });

  for (const seed of [11, 12, 13]) {
    test(`fuzz against a sorted array, seed ${seed}`, () => {
      const r = seededRandom(seed);
      const h = new PairingHeap<Entry>(less);
      const live = new Map<Entry, HeapNode<Entry>>();
      let seq = 0;
      for (let step = 0; step < 20_000; step++) {
        const op = r();
        if (op < 0.4) {
          const e = { k: Math.floor(r() * 100), seq: seq++ };
          live.set(e, h.insert(e));
        } else if (op < 0.6) {
          const got = h.pop();
          const expected = [...live.keys()].reduce<Entry | undefined>((m, e) => (m === undefined || less(e, m) ? e : m), undefined);
          expect(got).toBe(expected as Entry);
          if (got) live.delete(got);
        } else if (op < 0.8 && live.size > 0) {
          const keys = [...live.keys()];
          const e = keys[Math.floor(r() * keys.length)] as Entry;
          h.remove(live.get(e) as HeapNode<Entry>);
          live.delete(e);
        } else if (live.size > 0) {
          const keys = [...live.keys()];
          const e = keys[Math.floor(r() * keys.length)] as Entry;
          const node = live.get(e) as HeapNode<Entry>;
          if (r() < 0.5) {
            e.k -= Math.floor(r() * 10);
            h.decreased(node);
          } else {
            e.k += Math.floor(r() * 10) - 5;
            h.update(node);
          }
        }
        expect(h.size).toBe(live.size);
        if (step % 1000 === 0) h.checkInvariants();
      }
      h.checkInvariants();
    });
  }

  test("inserts in order wait in batches: the first pop pairs about one subtree per 64 inserts, not every entry", () => {
    let compares = 0;
    const counting = (a: Entry, b: Entry) => {
      compares++;
      return less(a, b);
    };
    const h = new PairingHeap<Entry>(counting);
    const n = 64_000;
    for (let i = 0; i < n; i++) h.insert({ k: i, seq: i });
    h.checkInvariants();
    compares = 0;
    expect(h.pop()?.k).toBe(0);
    // One meld per batch's subtree (1,000) and the pairing's second pass over them; melding every insert into the root made it 64,000.
    expect(compares).toBeLessThan(2_500);
    for (let i = 1; i < n; i++) expect(h.pop()?.k).toBe(i);
    expect(h.size).toBe(0);
  });

  test("an entry still waiting in the insert batch can be removed, decreased, walked from the root and counted", () => {
    const h = new PairingHeap<Entry>(less);
    h.insert({ k: 0, seq: 0 });
    const waiting = Array.from({ length: 10 }, (_, i) => h.insert({ k: 100 + i, seq: i + 1 }));
    h.checkInvariants();
    expect(h.size).toBe(11);
    expect(h.peek()?.k).toBe(0);
    h.remove(waiting[3]!);
    expect(waiting[3]!.inHeap).toBe(false);
    const more = Array.from({ length: 5 }, (_, i) => h.insert({ k: 200 + i, seq: 20 + i }));
    more[2]!.value.k = -1;
    h.decreased(more[2]!);
    expect(h.peek()?.k).toBe(-1);
    h.checkInvariants();
    // A walk from peekNode reaches every entry.
    const seen: number[] = [];
    const stack = [h.peekNode()!];
    while (stack.length > 0) {
      const node = stack.pop()!;
      seen.push(node.value.k);
      for (let child = node.child; child !== null; child = child.next) stack.push(child);
    }
    expect(seen.length).toBe(h.size);
    const popped: number[] = [];
    while (h.size > 0) popped.push(h.pop()!.k);
    expect(popped).toEqual([-1, 0, 100, 101, 102, 104, 105, 106, 107, 108, 109, 200, 201, 203, 204]);
  });
});
