// BENCHMARKS.md's table (bench/load/page.ts) from a small hand-made result:
// two repeats of a run in two priority orders, the second order labelled by
// suffix ("orq strict fifo") for some systems and nested ({ fifo: {...} })
// for another. Checks the cells: medians with their min–max, a dash where an
// order did not measure a figure, the target ratios and their status.

import { describe, expect, test } from "bun:test";
import { BEGIN, END, type LoadReport, pageTables, replaceTable, resultsByOrder } from "../../bench/load/page.ts";
import { LOCALITY_FULL_FIT_SHARE_MIN, LOCALITY_RATE_RATIO_MIN } from "../../bench/load/report.ts";

const drain = (itemsPerS: number) => ({ drain: { items: 1000, seconds: 1000 / itemsPerS, itemsPerS, requestsPerS: itemsPerS / 100 } });
const ping = (p50Us: number) => ({ latency: { pinned: true, ops: { ping: { count: 100, p50Us, p90Us: p50Us, p99Us: p50Us, p999Us: p50Us, maxUs: p50Us, meanUs: p50Us } } } });

/** One repeat: orq strict and beanstalkd in-memory drain in both orders, ping in the first order only. */
function repeat(orq: number, orqFifo: number, peer: number, peerFifo: number, orqPingUs: number, relaxed: number, relaxedFifo: number) {
  return {
    options: { priorities: ["random", "fifo"] },
    results: {
      "echo floor": ping(30),
      "orq strict": { ...drain(orq), ...ping(orqPingUs) },
      "orq relaxed": { ...drain(relaxed), fifo: drain(relaxedFifo) },
      "beanstalkd in-memory": drain(peer),
      "orq strict fifo": drain(orqFifo),
      "beanstalkd in-memory fifo": drain(peerFifo),
    },
  };
}

const report = {
  startedAt: "2026-12-07T10:00:00.000Z",
  machine: { nproc: 2, cpuModel: "Test CPU", bun: "1.4.5", beanstalkd: null },
  options: { priorities: ["random", "fifo"] },
  results: {},
  repeats: [repeat(120_000, 140_000, 30_000, 28_000, 33, 90_000, 95_000), repeat(100_000, 150_000, 25_000, 25_000, 36, 80_000, 85_000)],
} as unknown as LoadReport;

/** The cells of the row whose first cells are `start`, after them. */
function row(markdown: string, ...start: string[]): string[] | undefined {
  for (const line of markdown.split("\n")) {
    const cells = line.split("|").slice(1, -1).map((cell) => cell.trim());
    if (start.every((cell, i) => cells[i] === cell)) return cells.slice(start.length);
  }
  return undefined;
}

describe("bench/load/page.ts", () => {
  const page = pageTables([report], "results.json");

  test("splits results by priority order, by label suffix and by nesting", () => {
    const orders = resultsByOrder(report.repeats?.[0] as LoadReport);
    expect([...orders.keys()]).toEqual(["random", "fifo"]);
    expect(Object.keys(orders.get("random") ?? {})).toEqual(["echo floor", "orq strict", "orq relaxed", "beanstalkd in-memory"]);
    expect(Object.keys(orders.get("fifo") ?? {})).toEqual(["orq relaxed", "orq strict", "beanstalkd in-memory"]);
    expect(orders.get("random")?.["orq relaxed"]).toEqual(drain(90_000));
  });

  test("a figure is the median over the repeats with its min–max, one column per order", () => {
    expect(row(page, "figure", "system")).toEqual(["random", "fifo"]);
    expect(row(page, "drain (take 100 + ack) items/s", "orq strict")).toEqual(["110,000 (100,000–120,000)", "145,000 (140,000–150,000)"]);
    expect(row(page, "", "orq relaxed")).toEqual(["85,000 (80,000–90,000)", "90,000 (85,000–95,000)"]);
    expect(row(page, "", "beanstalkd in-memory")).toEqual(["27,500 (25,000–30,000)", "26,500 (25,000–28,000)"]);
    // Measured in the first order only: a dash in the other; the same in every repeat: no range.
    expect(row(page, "ping p50 µs", "echo floor")).toEqual(["30.0", "—"]);
    expect(row(page, "", "orq strict")).toEqual(["34.5 (33.0–36.0)", "—"]);
    // Figures nobody measured have no row.
    expect(page).not.toContain("Jupiter: acquisitions/s");
  });

  test("each target's ratio over the repeats, and whether it is met, per order", () => {
    expect(row(page, "target", "bound")).toEqual(["ratio, random", "status, random", "ratio, fifo", "status, fifo"]);
    // random 120,000/30,000 and 100,000/25,000; fifo 140,000/28,000 and 150,000/25,000.
    expect(row(page, "drain, orq strict vs beanstalkd in-memory", "≥ 2x")).toEqual(["4.00x", "met (2 of 2 runs met)", "5.50x (5.00–6.00x)", "met (2 of 2 runs met)"]);
    expect(row(page, "ping p50, orq vs echo floor", "≤ 1.5x")).toEqual(["1.15x (1.10–1.20x)", "met (2 of 2 runs met)", "—", "not measured"]);
  });

  test("one run without priority orders: one value column, no ranges", () => {
    const single = pageTables([{ results: { "orq strict": drain(120_000), "beanstalkd in-memory": drain(30_000) } } as unknown as LoadReport], "one.json");
    expect(single.split("\n")[0]).toBe("Made by `bun bench/load/page.ts one.json` from one run.");
    expect(row(single, "figure", "system")).toEqual(["value"]);
    expect(row(single, "drain (take 100 + ack) items/s", "orq strict")).toEqual(["120,000"]);
    expect(row(single, "target", "bound")).toEqual(["ratio", "status"]);
    expect(row(single, "drain, orq strict vs beanstalkd in-memory", "≥ 2x")).toEqual(["4.00x", "met"]);
    // A "fifo" label without options.priorities still gets a column of its own, beside the run's own order.
    const suffixed = pageTables([{ ...report.repeats?.[0], options: {} } as LoadReport], "one.json");
    expect(row(suffixed, "figure", "system")).toEqual(["as run", "fifo"]);
    expect(row(suffixed, "drain (take 100 + ack) items/s", "orq strict")).toEqual(["120,000", "140,000"]);
  });

  test("renders the group scenarios' figures and targets: the in-process pick, the noisy neighbour, the capped drain", () => {
    const latency = (p99Us: number) => ({ count: 100, p50Us: p99Us / 2, p90Us: p99Us, p99Us, p999Us: p99Us, maxUs: p99Us, meanUs: p99Us / 2 });
    const noisy = (aloneUs: number, floodUs: number) => ({
      noisy: { groups: 100, groupItemsPerS: 50, floodItems: 1000, warmupS: 5, aloneS: 10, alone: latency(aloneUs), flood: latency(floodUs),
        floodEnqueue: { items: 1000, seconds: 1, itemsPerS: 1000, requestsPerS: 10 }, floodS: 2.5, floodDelivered: 1000, smallEnqueued: 500, smallDelivered: 500 },
    });
    const pass = (itemsPerS: number) => ({ load: { items: 1000, seconds: 1, itemsPerS: 1000, requestsPerS: 10 }, drain: { items: 1000, seconds: 1000 / itemsPerS, itemsPerS, requestsPerS: itemsPerS / 100 } });
    const pick = (shape: string, groups: number, p50Us: number, p99Us: number) => ({ shape, items: 1000, groups, deliveredShare: 0.6, dequeue: { p50Us: 9, p90Us: 9, p99Us: 9, p999Us: 9 }, pick: { p50Us, p90Us: p99Us, p99Us, p999Us: p99Us } });
    const run = {
      results: {
        "orq in-process": { groupPick: { items: 1000, signatures: 100, calls: 100, shapes: [pick("spread", 10, 2, 12), pick("one each", 1000, 3, 40)],
          memory: { items: 1000, withoutGroupsBytes: 100_000, oneEachBytes: 220_000, perGroupBytes: 120, spreadGroups: 10, spreadBytes: 110_000, perSpreadGroupBytes: 1000 } } },
        "orq strict": { ...noisy(4000, 6000), cappedDrain: { groups: 1000, maxLeased: 8, policy: { group: "*", max_leased: 8 }, plain: pass(100_000), capped: pass(90_000) } },
        "beanstalkd in-memory": noisy(400, 40_000),
      },
    } as unknown as LoadReport;
    const groups = pageTables([run], "groups.json");
    expect(row(groups, "noisy neighbour: small groups' delay p99 ms, without the flood", "orq strict")).toEqual(["4.0"]);
    expect(row(groups, "", "beanstalkd in-memory")).toEqual(["0.4"]);
    expect(row(groups, "noisy neighbour: small groups' delay p99 ms, during the flood", "orq strict")).toEqual(["6.0"]);
    expect(row(groups, 'capped drain (1,000 groups, "*" max_leased 8) items/s', "orq strict")).toEqual(["90,000"]);
    expect(row(groups, "group pick p99 µs, groups of one item", "orq in-process")).toEqual(["40.00"]);
    expect(row(groups, "memory per group beyond its item, bytes", "orq in-process")).toEqual(["120.0"]);
    // The pick's bounds are absolute: a ratio against the bound, the worse shape's figure.
    expect(row(groups, "group pick p50, the worse of items over groups and groups of one item, vs 5 µs", "≤ 1x")).toEqual(["0.600x", "met"]);
    expect(row(groups, "group pick p99, the worse of items over groups and groups of one item, vs 30 µs", "≤ 1x")).toEqual(["1.33x", "missed"]);
    expect(row(groups, "memory per group beyond its items (groups of one item vs the same items without groups) vs 160 bytes", "≤ 1x")).toEqual(["0.750x", "met"]);
    expect(row(groups, "noisy neighbour: small groups' p99, enqueue to delivery, during one group's flood vs without it, orq strict", "≤ 2x")).toEqual(["1.50x", "met"]);
    expect(row(groups, 'capped drain (1,000 groups, "*" max_leased 8), orq strict vs its plain drain', "≥ 0.8x")).toEqual(["0.900x", "met"]);
  });

  test("renders the preference scenarios' figures and targets: locality with and without prefers, the in-process preference pick", () => {
    const pass = (prefers: boolean, acquisitionsPerS: number, fullFitShare: number) => ({
      prefers, preferWaitMs: prefers ? 50 : 0, backlog: 1000, kinds: 10, inFlightPerConnection: 32, acquisitions: acquisitionsPerS * 3, seconds: 3, acquisitionsPerS,
      fullFit: Math.round(acquisitionsPerS * 3 * fullFitShare), fullFitShare, emptyDequeues: 0, enqueued: 1000, delivered: 1000, redelivered: 0, drainS: 0.1, serverFit: null,
    });
    const pick = (shape: string, p50Us: number, p99Us: number) => ({ shape, items: 1000, preferWaitMs: shape === "held" ? 60_000 : 0, deliveredShare: 0.9, dequeues: 100, picks: 100,
      dequeue: { p50Us: 9, p90Us: 9, p99Us: 9, p999Us: 9 }, pick: { p50Us, p90Us: p99Us, p99Us, p999Us: p99Us } });
    const run = {
      results: {
        "orq in-process": { preferencePick: { items: 1000, signatures: 100, repos: 10, weights: [1, 10, 100], calls: 100, shapes: [pick("fit order", 2, 12), pick("held", 6, 20)] } },
        "orq strict": { locality: { prefers: pass(true, 45_000, 0.97), plain: pass(false, 50_000, 0.1) } },
        "orq relaxed": { locality: { prefers: pass(true, 60_000, 0.9), plain: pass(false, 60_000, 0.1) } },
      },
    } as unknown as LoadReport;
    const page = pageTables([run], "prefs.json");
    expect(row(page, "locality: acquisitions/s with prefers (10 kinds, 10 repositories, prefer_wait_ms 50)", "orq strict")).toEqual(["45,000"]);
    expect(row(page, "", "orq relaxed")).toEqual(["60,000"]);
    expect(row(page, "locality: acquisitions/s, the same stream without prefers", "orq strict")).toEqual(["50,000"]);
    expect(row(page, "locality: % of deliveries to a worker holding the item's repository", "orq strict")).toEqual(["97.0"]);
    expect(row(page, "locality: the same % without prefers (an assignment that ignores repositories)", "orq strict")).toEqual(["10.0"]);
    expect(row(page, "preference pick p99 µs, held (every item in its wait)", "orq in-process")).toEqual(["20.00"]);
    // The targets read orq strict: the share against 100%, the rate against the pass without prefers.
    expect(row(page, "locality: deliveries to a worker holding the item's repository (10 kinds, 10 repositories, prefer_wait_ms 50), orq strict", `≥ ${LOCALITY_FULL_FIT_SHARE_MIN}x`)).toEqual(["0.970x", "met"]);
    expect(row(page, "locality: acquisitions/s with prefers vs the same stream without, orq strict", `≥ ${LOCALITY_RATE_RATIO_MIN}x`)).toEqual(["0.900x", "met"]);
    // The pick's bounds are the group pick's, on the worse shape.
    expect(row(page, "preference pick p50, the worse of fit order and held, vs 5 µs", "≤ 1x")).toEqual(["1.20x", "missed"]);
    expect(row(page, "preference pick p99, the worse of fit order and held, vs 30 µs", "≤ 1x")).toEqual(["0.667x", "met"]);
  });

  test("renders the cost of waits and of retained results under the in-process label, without a target", () => {
    const outcome = (resultBytes: number, perOutcomeBytes: number, perResultBytes: number | null) => ({
      resultBytes, items: 1000, heapBytes: perOutcomeBytes * 1000, roundsHeapBytes: [perOutcomeBytes * 1000], perOutcomeBytes, perOutcomeBeyondResultBytes: perOutcomeBytes - resultBytes,
      perResultBytes, perResultBeyondBytes: perResultBytes === null ? null : perResultBytes - resultBytes,
    });
    const run = {
      results: {
        "orq in-process": {
          waitsCost: {
            waits: { parked: 100_000, owners: 100, perOwner: 1000, heapBytes: 130_000_000, perWaitBytes: 1300, receiptsPerAck: 100, wakeMs: 2500, acksAloneMs: 500, wakeUsPerWait: 20, answered: 100_000 },
            results: { items: 1000, receiptsPerAck: 100, outcomes: [outcome(0, 2, null), outcome(100, 352, 350), outcome(1024, 1300, 1298)] },
          },
        },
      },
    } as unknown as LoadReport;
    const page = pageTables([run], "waits.json");
    expect(row(page, "parked waits held at once (one live item each, over 100 connections)", "orq in-process")).toEqual(["100,000"]);
    expect(row(page, "memory per parked wait, bytes", "orq in-process")).toEqual(["1,300.0"]);
    expect(row(page, "wake: ms from the first ack to the last wait answered", "orq in-process")).toEqual(["2,500.0"]);
    expect(row(page, "wake: µs per wait beyond its ack", "orq in-process")).toEqual(["20.00"]);
    expect(row(page, "memory per retained acked outcome without a result, bytes", "orq in-process")).toEqual(["2.0"]);
    expect(row(page, "memory per retained acked outcome with a 100 B result, bytes beyond the result", "orq in-process")).toEqual(["252.0"]);
    expect(row(page, "memory per retained acked outcome with a 1 KiB result, bytes beyond the result", "orq in-process")).toEqual(["276.0"]);
    expect(row(page, "memory a 100 B result adds to an acked outcome, bytes beyond its own", "orq in-process")).toEqual(["250.0"]);
    // Figures only: no target row names them.
    expect(page.split("\n").filter((line) => line.includes("wait") && line.includes("≤"))).toEqual([]);
  });

  test("--write replaces only the text between the markers", () => {
    const markdown = `# Benchmarks\n\nintro\n\n${BEGIN}\nold table\n${END}\n\nafter\n`;
    expect(replaceTable(markdown, "NEW")).toBe(`# Benchmarks\n\nintro\n\n${BEGIN}\nNEW\n${END}\n\nafter\n`);
    expect(() => replaceTable("no markers", "NEW")).toThrow("markers");
  });
});
