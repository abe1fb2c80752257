// Goal: every kind of bad storage at open is a StoreOpenError with one clear
// line (never a crash, never a silent start with data missing), and a disk
// that fills up during operation turns into failed commits, an open store
// breaker (its transition reported with the disk's error) and refused writes,
// then recovers once space is freed. The full-disk
// cases use a small tmpfs, which needs root; they are skipped without it.

import { afterEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../src/lib/clock.ts";
import type { BreakerTransition } from "../../src/storage/circuit-breaker.ts";
import { GroupCommitter } from "../../src/storage/group-commit.ts";
import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import { StoreOpenError } from "../../src/storage/store.ts";
import type { Store } from "../../src/storage/store.ts";
import { StorageUnavailableError } from "../../src/storage/writer.ts";
import { itemRecord } from "./record-fixtures.ts";
import { loadAll } from "./store-suite.ts";

const isRoot = process.getuid?.() === 0;

function mount(target: string, options: string): boolean {
  return spawnSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", target]).status === 0;
}

function unmount(target: string): void {
  const result = spawnSync("umount", [target]);
  if (result.status !== 0) throw new Error(`umount ${target} failed: ${String(result.stderr)}`);
}

/** Whether this process may mount a tmpfs (root in a container that allows it). */
const canMount = (() => {
  if (!isRoot) return false;
  const probe = mkdtempSync(join(tmpdir(), "orq-mount-probe-"));
  const mounted = mount(probe, "size=64k");
  if (mounted) unmount(probe);
  rmSync(probe, { recursive: true, force: true });
  return mounted;
})();

let base = "";
const mounts: string[] = [];

function freshBase(): string {
  base = mkdtempSync(join(tmpdir(), "orq-bad-storage-"));
  return base;
}

afterEach(() => {
  for (const target of mounts.splice(0)) unmount(target);
  if (base !== "") rmSync(base, { recursive: true, force: true });
  base = "";
});

async function openError(dataDir: string): Promise<string> {
  const outcome = await openLmdbStore({ dataDir, shards: 4, durability: "strict" }).then(
    async (store) => {
      await store.close();
      return null;
    },
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(StoreOpenError);
  const message = (outcome as StoreOpenError).message;
  expect(message).not.toContain("\n");
  expect(message).toStartWith(`cannot open data dir ${dataDir}: `);
  return message;
}

describe("LMDB open on bad storage", () => {
  test("data.mdb full of random bytes", async () => {
    const dataDir = join(freshBase(), "random");
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, "data.mdb"), crypto.getRandomValues(new Uint8Array(64 * 1024)));
    expect(await openError(dataDir)).toContain("data.mdb is not an LMDB database");
  });

  test("a text file where data.mdb should be (short, then long)", async () => {
    const dataDir = join(freshBase(), "text");
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, "data.mdb"), "these are my notes\n");
    expect(await openError(dataDir)).toContain("too short to be an LMDB database");
    writeFileSync(join(dataDir, "data.mdb"), "these are my notes\n".repeat(1000));
    expect(await openError(dataDir)).toContain("data.mdb is not an LMDB database");
  });

  test("an LMDB file from another program", async () => {
    const dataDir = join(freshBase(), "foreign");
    mkdirSync(dataDir);
    const { open } = await import("lmdb");
    const foreign = open({ path: join(dataDir, "data.mdb"), noSubdir: true });
    await foreign.put("someone-else", "their data");
    await foreign.close();
    expect(await openError(dataDir)).toContain('data.mdb holds a database orq did not write (found "someone-else")');
  });

  test("the data dir path is a file, or lies under one", async () => {
    const file = join(freshBase(), "plain-file");
    writeFileSync(file, "x");
    expect(await openError(file)).toContain("it is a file, not a directory");
    expect(await openError(join(file, "below"))).toContain("a part of the path is a file, not a directory");
  });

  test("data.mdb is a directory", async () => {
    const dataDir = join(freshBase(), "dir-as-file");
    mkdirSync(join(dataDir, "data.mdb"), { recursive: true });
    expect(await openError(dataDir)).toContain("data.mdb is not a regular file");
  });

  test.skipIf(isRoot)("an unwritable data dir (EACCES)", async () => {
    const dataDir = join(freshBase(), "locked");
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o500);
    try {
      expect(await openError(dataDir)).toContain("permission denied");
    } finally {
      chmodSync(dataDir, 0o700);
    }
  });

  test.skipIf(!isRoot)("an unwritable data dir (EACCES), opened by a child process without root's file-permission override", () => {
    // Root ignores file permissions through CAP_DAC_OVERRIDE, so the open runs in
    // a child whose capability bounding set lacks it. The child stays root (not
    // another user), so it can still read this repository wherever it was
    // cloned, even under a 0700 directory.
    const dataDir = join(freshBase(), "locked");
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o500);
    const storeModule = join(import.meta.dir, "../../src/storage/lmdb/lmdb-store.ts");
    const script = `const { openLmdbStore } = await import(${JSON.stringify(storeModule)});
      const outcome = await openLmdbStore({ dataDir: ${JSON.stringify(dataDir)}, shards: 2, durability: "strict" })
        .then(() => "OPENED", (error) => String(error));
      console.log(outcome);`;
    const child = spawnSync("setpriv", ["--bounding-set=-dac_override,-dac_read_search", process.execPath, "-e", script], {
      encoding: "utf8",
    });
    chmodSync(dataDir, 0o700);
    expect(child.stdout.trim()).toBe(
      `StoreOpenError: cannot open data dir ${dataDir}: permission denied (the server needs read and write access to the data dir)`,
    );
  });

  test.skipIf(!canMount)("a read-only file system", async () => {
    const dataDir = join(freshBase(), "readonly");
    mkdirSync(dataDir);
    expect(mount(dataDir, "size=4m,ro")).toBe(true);
    mounts.push(dataDir);
    expect(await openError(dataDir)).toContain("the file system is read-only");
  });

  test.skipIf(!canMount)("a full disk at open", async () => {
    const disk = join(freshBase(), "full");
    mkdirSync(disk);
    expect(mount(disk, "size=256k")).toBe(true);
    mounts.push(disk);
    writeFileSync(join(disk, "filler"), new Uint8Array(200 * 1024));
    expect(await openError(join(disk, "data"))).toContain("the disk is full");
  });
});

describe.skipIf(!canMount)("LMDB full disk during commits", () => {
  test("commits fail, the store's breaker opens (logged with the disk's error), writes are refused; freeing space lets a probe close it", async () => {
    const disk = join(freshBase(), "small");
    mkdirSync(disk);
    expect(mount(disk, "size=2m")).toBe(true);
    mounts.push(disk);
    const filler = join(disk, "filler");
    const store: Store = await openLmdbStore({ dataDir: join(disk, "data"), shards: 2, durability: "strict" });
    // lmdb-js reports each failed commit with console.error before it rejects
    // (the server's stderr gets these lines too, docs/STORAGE.md). Here they
    // are expected: caught and checked rather than printed as if the test failed.
    const lmdbReports: unknown[] = [];
    const consoleError = console.error;
    console.error = (...args: unknown[]) => {
      lmdbReports.push(args[0]);
    };
    try {
      // Leave a little room, then fill it with items.
      writeFileSync(filler, new Uint8Array(800 * 1024));
      const clock = new ManualClock();
      const transitions: BreakerTransition[] = [];
      const writer = new GroupCommitter(store, { clock, events: { breakerTransition: (t) => transitions.push(t) } });
      const payload = new Uint8Array(2000);
      let key = 0;
      let unavailable: StorageUnavailableError | null = null;
      // Bounded: 2 MiB cannot hold 400 commits of 50 x 2 KB items.
      for (let commit = 0; commit < 400 && unavailable === null; commit++) {
        clock.advance(10);
        const set = writer.begin();
        for (let index = 0; index < 50; index++) set.putItem(0, key++, itemRecord({ payload }));
        const error = await set.end().then(
          () => null,
          (reason: unknown) => reason,
        );
        if (error !== null) {
          expect(error).toBeInstanceOf(StorageUnavailableError);
          if (!writer.allWritable(clock.nowMs())) unavailable = error as StorageUnavailableError;
        }
      }
      expect(unavailable).not.toBeNull();
      expect(writer.commitStats().commitFailuresTotal).toBeGreaterThanOrEqual(5);
      // One report per failed commit, each the disk's error (EIO from the page write, or ENOSPC).
      expect(lmdbReports.length).toBe(writer.commitStats().commitFailuresTotal);
      for (const report of lmdbReports) expect((report as Error).message).toMatch(/Input\/output error|No space left on device/);
      const refused = await writer.begin().end(); // an empty set is not refused
      expect(refused).toBeUndefined();
      // One breaker for the store: the shard that was never written refuses too (one transaction covers both).
      for (const shard of [0, 1]) expect(writer.writable(shard, clock.nowMs())).toMatchObject({ available: false, retryAfterMs: 5000 });
      const refusedWrite = writer.begin();
      refusedWrite.putItem(1, key++, itemRecord());
      const refusal = await refusedWrite.end().then(
        () => null,
        (reason: unknown) => reason,
      );
      expect(refusal).toBeInstanceOf(StorageUnavailableError);
      expect(transitions.map((t) => t.to)).toEqual(["open"]);
      // The reason carries what the disk said (a full tmpfs shows as EIO "Input/output error" from the page write).
      expect(transitions[0]?.reason).toMatch(/commits failed within .* ms, the last with: LMDB commit failed: .*(input\/output|no space|ENOSPC|EIO|MDB_)/i);

      // Free the space; after the cool-down the probe commits and the shard is back.
      rmSync(filler);
      clock.advance(5000);
      const probe = writer.begin();
      probe.putItem(0, key++, itemRecord());
      await probe.end();
      expect(writer.allWritable(clock.nowMs())).toBe(true);
      expect(transitions.map((t) => t.to)).toEqual(["open", "half_open", "probing", "closed"]);
      const stored = loadAll(store).get(0) ?? [];
      expect(stored.length).toBeGreaterThan(0);
      // Only whole commits are stored: the count is a multiple of 50, plus the probe.
      expect((stored.length - 1) % 50).toBe(0);
    } finally {
      console.error = consoleError;
      await store.close();
    }
  });
});
