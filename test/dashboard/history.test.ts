// Goal: the dashboard's history ring is bounded (capacity-1, capacity,
// capacity+1 samples), keeps a coarse sample per coarse period, turns
// counters into rates, tracks at most the named number of namespaces and
// topics, and forgets names that stopped appearing for a day.

import { describe, expect, test } from "bun:test";
import { History, SeriesRing, samplesFromStats, type NamespaceSample } from "../../src/dashboard/history.ts";
import { historyChart } from "../../src/dashboard/history-chart.ts";
import { dashboardLimits } from "../../src/limits.ts";

const fineMs = dashboardLimits.historyFineSampleMs;

function sample(enqueued: number, ready: number, topics: Record<string, number> = {}): NamespaceSample {
  return {
    states: { ready, delayed: 0, waiting: 0, leased: 0, dead: 0 },
    counters: { enqueued, delivered: 0, acked: 0, nacked: 0, dead: 0 },
    topics: new Map(Object.entries(topics).map(([t, r]) => [t, { ready: r, delayed: 0, waiting: 0, leased: 0, dead: 0 }])),
  };
}

describe("SeriesRing", () => {
  test("holds at most its capacity, oldest first", () => {
    const ring = new SeriesRing(3, 1);
    ring.push(1, [10]);
    ring.push(2, [20]);
    expect(ring.read()).toEqual({ timesMs: [1, 2], columns: [[10, 20]] });
    ring.push(3, [30]);
    expect(ring.read()).toEqual({ timesMs: [1, 2, 3], columns: [[10, 20, 30]] });
    ring.push(4, [40]);
    expect(ring.read()).toEqual({ timesMs: [2, 3, 4], columns: [[20, 30, 40]] });
  });
});

describe("History", () => {
  test("an hour of fine samples and a day of coarse ones", () => {
    const history = new History();
    const startMs = 1_000_000;
    const samples = dashboardLimits.historyFineSamples + 1;
    for (let i = 0; i < samples; i++) history.record(startMs + i * fineMs, new Map([["n", sample(i * 10, i)]]));
    const fine = history.depths("n", "hour")!;
    expect(fine.timesMs).toHaveLength(dashboardLimits.historyFineSamples);
    expect(fine.timesMs[0]).toBe(startMs + fineMs);
    const coarse = history.depths("n", "day")!;
    const perCoarse = dashboardLimits.historyCoarseSampleMs / fineMs;
    expect(coarse.timesMs).toHaveLength(Math.ceil(samples / perCoarse));
    expect(coarse.timesMs[1]! - coarse.timesMs[0]!).toBe(dashboardLimits.historyCoarseSampleMs);
  });

  test("rates are counter differences per second between samples", () => {
    const history = new History();
    history.record(0, new Map([["n", sample(0, 0)]]));
    history.record(fineMs, new Map([["n", sample(50, 0)]]));
    history.record(2 * fineMs, new Map([["n", sample(50, 0)]]));
    const rates = history.rates("n", "hour")!;
    expect(rates.timesMs).toEqual([fineMs, 2 * fineMs]);
    expect(rates.columns[0]).toEqual([50 / (fineMs / 1000), 0]);
    const chart = historyChart(history, "n", new URLSearchParams("kind=rates"));
    expect(chart.labels[0]).toBe("enqueued");
    expect(chart.data[0]).toEqual([fineMs / 1000, (2 * fineMs) / 1000]);
    expect(historyChart(history, "unknown", new URLSearchParams("kind=depths")).data[0]).toEqual([]);
  });

  test("at most historyNamespacesMax namespaces and historyTopicsMax topics", () => {
    const history = new History();
    const samples = new Map<string, NamespaceSample>();
    for (let i = 0; i <= dashboardLimits.historyNamespacesMax; i++) samples.set(`ns${i}`, sample(0, 0));
    const topics: Record<string, number> = {};
    for (let i = 0; i <= dashboardLimits.historyTopicsMax; i++) topics[`t${i}`] = i;
    samples.set("ns0", sample(0, 0, topics));
    history.record(0, samples);
    expect(history.namespaceCount).toBe(dashboardLimits.historyNamespacesMax);
    expect(history.hasNamespace(`ns${dashboardLimits.historyNamespacesMax - 1}`)).toBe(true);
    expect(history.hasNamespace(`ns${dashboardLimits.historyNamespacesMax}`)).toBe(false);
    expect(history.topicCount).toBe(dashboardLimits.historyTopicsMax);
    expect(history.hasTopic("ns0", `t${dashboardLimits.historyTopicsMax}`)).toBe(false);
    expect(history.topicDepths("ns0", "t3", "hour")).toEqual({ timesMs: [0], totals: [3] });
  });

  test("a name that no sample mentions for a day is forgotten", () => {
    const history = new History();
    history.record(0, new Map([["old", sample(0, 0, { t: 1 })]]));
    const dayMs = dashboardLimits.historyCoarseSampleMs * dashboardLimits.historyCoarseSamples;
    history.record(dayMs, new Map([["new", sample(0, 0)]]));
    expect(history.hasNamespace("old")).toBe(true);
    history.record(dayMs + 1, new Map([["new", sample(0, 0)]]));
    expect(history.hasNamespace("old")).toBe(false);
    expect(history.hasTopic("old", "t")).toBe(false);
  });

  test("samples are read from a stats reply, topic names kept as given", () => {
    const samples = samplesFromStats({
      namespaces: { n: { ready: 2, dead: 1, counters: { enqueued: 5, acked: 3 }, topics: { "a<b": { ready: 2, dead: 1 } } } },
    });
    const n = samples.get("n")!;
    expect(n.states).toEqual({ ready: 2, delayed: 0, waiting: 0, leased: 0, dead: 1 });
    expect(n.counters).toEqual({ enqueued: 5, delivered: 0, acked: 3, nacked: 0, dead: 0 });
    expect(n.topics.get("a<b")).toEqual({ ready: 2, delayed: 0, waiting: 0, leased: 0, dead: 1 });
  });
});
