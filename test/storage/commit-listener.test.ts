// Goal: a closed WriteSet's Commit (storage/writer.ts) tells its one listener
// once, only after the commit carrying it settles: committed, in the order
// the sets were closed; a failed shard fails exactly the sets that wrote it,
// with a StorageUnavailableError; a set with nothing to write, or refused
// (queue full, breaker open), settles at once, and makes no promise nobody
// asked for. A listener that throws keeps neither the others from hearing nor
// the next batch from starting. An ack is one write: the item's delete and
// its acked-log entry. Time comes from a ManualClock; the faulty MemoryStore
// supplies failures and held commits.

import { describe, expect, test } from "bun:test";
import { AssertionError } from "../../src/lib/assert.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { pendingWriteSetsMax } from "../../src/limits.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { MemoryStore } from "../../src/storage/memory/memory-store.ts";
import { type CommitListener, StorageUnavailableError } from "../../src/storage/writer.ts";
import { itemRecord } from "./record-fixtures.ts";
import { loadAll } from "./store-suite.ts";

/** Let setImmediate callbacks and settled promises run. */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function setup(shards = 2) {
  const clock = new ManualClock();
  const store = new MemoryStore({ shards });
  const writer = new GroupCommitter(store, { clock });
  return { clock, store, writer };
}

/** Records what it hears, under its name, into a shared log. */
class Recorder implements CommitListener {
  constructor(
    private readonly name: string,
    private readonly log: Array<[string, string]>,
  ) {}
  committed(): void {
    this.log.push([this.name, "committed"]);
  }
  failed(error: unknown): void {
    this.log.push([this.name, error instanceof StorageUnavailableError ? `failed: shard ${error.shard}` : `failed: ${String(error)}`]);
  }
}

function closeOne(writer: GroupCommitter, shard: number, key: number) {
  const set = writer.begin();
  set.putItem(shard, key, itemRecord());
  return set.close();
}

describe("Commit listeners", () => {
  test("are told only after the commit, once each, in the order the sets were closed", async () => {
    const { store, writer } = setup();
    store.pauseCommits();
    const log: Array<[string, string]> = [];
    const first = closeOne(writer, 0, 1);
    first.listen(new Recorder("first", log));
    await turn();
    // The first commit is in flight; the next two gather behind it.
    closeOne(writer, 1, 2).listen(new Recorder("second", log));
    closeOne(writer, 0, 3).listen(new Recorder("third", log));
    await turn();
    expect(log).toEqual([]);
    expect(store.commitHistory.length).toBe(1);
    store.resumeCommits();
    await writer.drain();
    expect(log).toEqual([
      ["first", "committed"],
      ["second", "committed"],
      ["third", "committed"],
    ]);
    expect(store.commitHistory.map((commit) => commit.items)).toEqual([1, 2]);
    // Heard after it settled: told at once, the same answer.
    const late: Array<[string, string]> = [];
    expect(() => first.listen(new Recorder("again", late))).toThrow(AssertionError);
    const settled = closeOne(writer, 0, 4);
    await writer.drain();
    settled.listen(new Recorder("late", late));
    expect(late).toEqual([["late", "committed"]]);
  });

  test("a failed shard fails each set that wrote it, and only those; a promise asked for too settles alike", async () => {
    const { store, writer } = setup();
    store.failShard(1, new Error("EIO"));
    const log: Array<[string, string]> = [];
    closeOne(writer, 0, 1).listen(new Recorder("shard 0", log));
    const failing = closeOne(writer, 1, 2);
    failing.listen(new Recorder("shard 1", log));
    const promised = failing.promise();
    const both = writer.begin();
    both.putItem(0, 3, itemRecord());
    both.putItem(1, 4, itemRecord());
    both.close().listen(new Recorder("both", log));
    closeOne(writer, 1, 5).listen(new Recorder("shard 1 again", log));
    await writer.drain();
    expect(log).toEqual([
      ["shard 0", "committed"],
      ["shard 1", "failed: shard 1"],
      ["both", "failed: shard 1"],
      ["shard 1 again", "failed: shard 1"],
    ]);
    const error = await promised.then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as Error).message).toContain("EIO");
    expect(writer.commitStats().commitFailuresTotal).toBe(1);
  });

  test("a set with nothing to write is committed at once; a refused set has failed at once, with no promise made", async () => {
    const { store, writer } = setup(1);
    const log: Array<[string, string]> = [];
    writer.begin().close().listen(new Recorder("empty", log));
    expect(log).toEqual([["empty", "committed"]]);
    expect(store.commitHistory.length).toBe(0);

    store.pauseCommits();
    closeOne(writer, 0, 0).listen(new Recorder("in flight", log));
    await turn();
    for (let key = 1; key <= pendingWriteSetsMax; key++) closeOne(writer, 0, key);
    // The queue is full: the next set is refused in close(), before anyone listens.
    const refused = closeOne(writer, 0, pendingWriteSetsMax + 1);
    refused.listen(new Recorder("refused", log));
    expect(log).toEqual([
      ["empty", "committed"],
      ["refused", "failed: shard null"],
    ]);
    expect(writer.commitStats().writeSetsRejectedTotal).toBe(1);
    store.resumeCommits();
    await writer.drain();
    expect(log.at(-1)).toEqual(["in flight", "committed"]);
  });

  test("a listener that throws: the others still hear, the next batch still starts, and the error escapes as an unhandled rejection (which stops the server)", () => {
    // In a process of its own: the test runner would take the rejection as this test's failure.
    const script = `
      import { ManualClock } from ${JSON.stringify(new URL("../../src/lib/clock.ts", import.meta.url).pathname)};
      import { GroupCommitter } from ${JSON.stringify(new URL("../../src/storage/group-commit.ts", import.meta.url).pathname)};
      import { MemoryStore } from ${JSON.stringify(new URL("../../src/storage/memory/memory-store.ts", import.meta.url).pathname)};
      import { itemRecord } from ${JSON.stringify(new URL("./record-fixtures.ts", import.meta.url).pathname)};
      process.on("unhandledRejection", (reason) => { console.log("escaped: " + reason.message); process.exitCode = 3; });
      const writer = new GroupCommitter(new MemoryStore({ shards: 1 }), { clock: new ManualClock() });
      let key = 0;
      function close(name) {
        const set = writer.begin();
        set.putItem(0, key++, itemRecord());
        set.close().listen({
          committed: () => {
            console.log("heard " + name);
            // Joins the batch that gathers while this one's listeners run.
            if (name === "first") close("next batch");
            if (name === "thrower") throw new Error("listener broken");
          },
          failed: () => {},
        });
      }
      for (const name of ["first", "thrower", "last"]) close(name);
    `;
    const run = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const lines = run.stdout.toString().trim().split("\n");
    expect(lines.slice(0, 3)).toEqual(["heard first", "heard thrower", "heard last"]);
    expect(lines.slice(3).sort()).toEqual(["escaped: listener broken", "heard next batch"]);
    expect(run.exitCode).toBe(3);
  });

  test("an ack is one write: it deletes the item and enters the acked log, in place of an earlier write to it", async () => {
    const { store, writer } = setup(1);
    await closeOne(writer, 0, 7).promise();
    const set = writer.begin();
    set.putItem(0, 8, itemRecord());
    set.putItem(0, 7, itemRecord({ priority: 2 }));
    set.ackItem("ns", 0, 7, 1234);
    await set.end();
    expect(store.commitHistory.at(-1)).toMatchObject({ items: 2, acked: 1 });
    expect(loadAll(store).get(0)?.map((entry) => entry.key)).toEqual([8]);
    const acked = [...store.loadAckedLog()];
    expect(acked.length).toBe(1);
    expect(acked[0]).toMatchObject({ namespaces: ["ns"], keys: [7], endedAtMs: 1234 });
  });
});
