// Goal: the contract's live-state names are one list without repeats, and the
// engine's own list (the engine may not import protocol) is the same list in
// the same order, so the server hands states across unchanged.

import { expect, test } from "bun:test";
import { liveStateNames as engineStates } from "../../src/engine/api.ts";
import { liveStateNames } from "../../src/protocol/live-states.ts";

test("the live-state names are distinct", () => {
  expect(new Set(liveStateNames).size).toBe(liveStateNames.length);
});

test("the engine's live states are the contract's, in its order", () => {
  expect([...engineStates]).toEqual([...liveStateNames]);
});
