// Goal: what the engine's read-ahead relies on from the GroupCommitter
// (src/engine/ready/read-ahead.ts): commitGeneration is odd exactly while a commit
// is in flight and moves at every start and landing, and the idle listener
// runs once per commit that lands with nothing waiting for the next, before
// that commit's promises settle their reactions.

import { describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import { itemRecord } from "./record-fixtures.ts";

function setup() {
  const store = new MemoryStore({ shards: 2 });
  const writer = new GroupCommitter(store, { clock: new ManualClock() });
  return { store, writer };
}

function writeOne(writer: GroupCommitter, key: number): Promise<void> {
  const set = writer.begin();
  set.putItem(0, key, itemRecord({}));
  return set.end();
}

/** Let setImmediate callbacks and settled promises run. */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe("GroupCommitter: commit generation and the idle listener", () => {
  test("the generation is odd while a commit is in flight and even once it lands", async () => {
    const { store, writer } = setup();
    expect(writer.commitGeneration).toBe(0);
    store.pauseCommits();
    const first = writeOne(writer, 1);
    await turn();
    expect(writer.commitGeneration).toBe(1);
    store.resumeCommits();
    await first;
    expect(writer.commitGeneration).toBe(2);
  });

  test("the listener runs when the last commit lands, not while the next waits, and before the promises' reactions", async () => {
    const { store, writer } = setup();
    const events: string[] = [];
    writer.setIdleListener(() => events.push(`idle@${writer.commitGeneration}`));
    store.pauseCommits();
    const first = writeOne(writer, 1).then(() => events.push("first settled"));
    await turn();
    // A second write waits for the first commit: when the first lands the writer is not idle.
    const second = writeOne(writer, 2).then(() => events.push("second settled"));
    store.resumeCommits();
    await Promise.all([first, second]);
    expect(events).toEqual(["first settled", "idle@4", "second settled"]);

    writer.setIdleListener(null);
    await writeOne(writer, 3);
    expect(events.length).toBe(3);
  });
});
