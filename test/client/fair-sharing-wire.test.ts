// Goal: the client's fair-sharing shapes cross the wire as the contract
// spells them: a `policy` request in snake_case with absent bounds left out
// (the contract reads an absent bound as none) and `clear` only when asked;
// stored policies, group counts and explanations read back into camelCase
// with absent fields kept absent, the null group kept null, and a reason this
// client does not know passed through by name.

import { describe, expect, test } from "bun:test";
import {
  explanationFromWire,
  groupCountsFromWire,
  policyFromWire,
  policyRequestFields,
  policyResultFromWire,
} from "../../src/client/fair-sharing-wire.ts";

describe("policy", () => {
  test("request fields: snake_case, absent bounds absent", () => {
    expect(policyRequestFields("emails", { group: "acme", weight: 3, maxLeased: 5, rate: { count: 10, perMs: 1000 } })).toEqual({
      topic: "emails",
      group: "acme",
      weight: 3,
      max_leased: 5,
      rate: { count: 10, per_ms: 1000 },
      clear: undefined,
    });
    const topicOwn = policyRequestFields("emails", { maxLeased: 2 });
    expect(Object.entries(topicOwn).filter(([, v]) => v !== undefined)).toEqual([
      ["topic", "emails"],
      ["max_leased", 2],
    ]);
    expect(policyRequestFields("emails", { group: "*", clear: true }).clear).toBe(true);
    expect(policyRequestFields("emails", { group: "*", clear: false }).clear).toBeUndefined();
  });

  test("replies: the policy as stored, or cleared", () => {
    expect(policyResultFromWire({ policy: { group: "acme", weight: 2, rate: { count: 1, per_ms: 60000 } } })).toEqual({
      policy: { group: "acme", weight: 2, rate: { count: 1, perMs: 60000 } },
    });
    expect(policyResultFromWire({ policy: {} })).toEqual({ policy: {} });
    expect(policyResultFromWire({ cleared: true })).toEqual({ cleared: true });
    expect(policyResultFromWire({ cleared: false })).toEqual({ cleared: false });
    expect(policyFromWire({ max_leased: 4 })).toEqual({ maxLeased: 4 });
  });
});

describe("groups", () => {
  test("counts, the null group, a timed pause; dead defaults to 0 when the server leaves it out", () => {
    expect(groupCountsFromWire({ group: null, ready: 1, delayed: 2, waiting: 3, leased: 4, dead: 5, paused: false })).toEqual({
      group: null,
      ready: 1,
      delayed: 2,
      waiting: 3,
      leased: 4,
      dead: 5,
      paused: false,
    });
    expect(groupCountsFromWire({ group: "acme", ready: 0, delayed: 0, waiting: 0, leased: 0, paused: true, paused_until_ms: 99 })).toEqual({
      group: "acme",
      ready: 0,
      delayed: 0,
      waiting: 0,
      leased: 0,
      dead: 0,
      paused: true,
      pausedUntilMs: 99,
    });
  });
});

describe("explain", () => {
  test("reasons with their details in camelCase; null stays null; unknown reasons pass through", () => {
    expect(explanationFromWire(null)).toBeNull();
    const explained = explanationFromWire({
      id: "0:1",
      state: "ready",
      reasons: [
        { reason: "group_max_leased", leased: 2, max: 2 },
        { reason: "group_rate", next_at_ms: 1234 },
        { reason: "waiting", after: ["0:0"] },
        { reason: "dead", dead_reason: "max_attempts" },
        { reason: "no_worker", kinds: [{ failed: ["gpu: {gte: 2}"] }] },
        { reason: "behind", ahead: 7 },
        { reason: "topic_paused" },
        { reason: "something_new" },
      ],
    });
    expect(explained).toEqual({
      id: "0:1",
      state: "ready",
      reasons: [
        { reason: "group_max_leased", leased: 2, max: 2 },
        { reason: "group_rate", nextAtMs: 1234 },
        { reason: "waiting", after: ["0:0"] },
        { reason: "dead", deadReason: "max_attempts" },
        { reason: "no_worker", kinds: [{ failed: ["gpu: {gte: 2}"] }] },
        { reason: "behind", ahead: 7 },
        { reason: "topic_paused" },
        { reason: "something_new" },
      ],
    });
  });
});
