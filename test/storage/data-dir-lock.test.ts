// Goal: one process per data dir. The lock file names its holder; a second
// lock on the same dir (a separate open file, as another process would hold)
// is refused with a StoreOpenError naming that PID, and so is a second LMDB
// store; once the holder releases (or closes its store), the dir locks again.
// The cross-process cases (a second server, a restart after kill -9) are in
// test/e2e/data-dir-lock.test.ts.

import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { existsSync } from "node:fs";
import { lockDataDir, lockFileName, refuseIfDataDirHeld } from "../../src/storage/lmdb/data-dir-lock.ts";
import { openLmdbStore } from "../../src/storage/lmdb/lmdb-store.ts";
import { StoreOpenError } from "../../src/storage/store.ts";

let dataDir = "";

afterEach(() => {
  if (dataDir !== "") rmSync(dataDir, { recursive: true, force: true });
  dataDir = "";
});

function freshDir(): string {
  dataDir = mkdtempSync(join(tmpdir(), "orq-lock-test-"));
  return dataDir;
}

function refusal(action: () => unknown): StoreOpenError {
  try {
    action();
  } catch (error) {
    if (error instanceof StoreOpenError) return error;
    throw error;
  }
  throw new Error("expected a StoreOpenError, got none");
}

describe("data dir lock", () => {
  test("the holder writes its PID; a second lock is refused naming it; after release the dir locks again", () => {
    const dir = freshDir();
    const first = lockDataDir(dir, 4242);
    expect(readFileSync(join(dir, lockFileName), "utf8")).toBe("4242\n");
    const error = refusal(() => lockDataDir(dir, 5353));
    expect(error.message).toBe(`data dir ${dir} is in use by another orq server (pid 4242); stop it, or give this one another --data-dir`);
    // The refused attempt left the holder's PID in place.
    expect(readFileSync(join(dir, lockFileName), "utf8")).toBe("4242\n");
    first.release();
    first.release();
    const second = lockDataDir(dir, 5353);
    expect(readFileSync(join(dir, lockFileName), "utf8")).toBe("5353\n");
    second.release();
  });

  test("a leftover lock file from a crashed holder (no lock held) is taken over and rewritten", () => {
    const dir = freshDir();
    writeFileSync(join(dir, lockFileName), "99999999\nstale text\n");
    const lock = lockDataDir(dir, 77);
    expect(readFileSync(join(dir, lockFileName), "utf8")).toBe("77\n");
    lock.release();
  });

  test("a lock whose holder has not written its PID yet is refused all the same", () => {
    const dir = freshDir();
    const first = lockDataDir(dir, 1);
    writeFileSync(join(dir, lockFileName), "");
    expect(refusal(() => lockDataDir(dir, 2)).message).toContain("(pid not yet written)");
    first.release();
  });

  test("refuseIfDataDirHeld: refuses a held dir naming the holder; creates nothing and leaves a free lock free", () => {
    const dir = freshDir();
    const missing = join(dir, "not-yet");
    refuseIfDataDirHeld(missing);
    expect(existsSync(missing)).toBe(false);
    refuseIfDataDirHeld(dir);
    expect(existsSync(join(dir, lockFileName))).toBe(false);
    const holder = lockDataDir(dir, 31);
    expect(refusal(() => refuseIfDataDirHeld(dir)).message).toBe(
      `data dir ${dir} is in use by another orq server (pid 31); stop it, or give this one another --data-dir`,
    );
    holder.release();
    // A free lock file: no refusal, and the check let go of it.
    refuseIfDataDirHeld(dir);
    lockDataDir(dir, 32).release();
  });

  test("a second LMDB store on a dir whose store is open is refused before LMDB opens; closing the first frees it", async () => {
    const dir = freshDir();
    const store = await openLmdbStore({ dataDir: dir, shards: 2, durability: "relaxed" });
    const refused = await openLmdbStore({ dataDir: dir, shards: 2, durability: "relaxed" }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(StoreOpenError);
    expect((refused as Error).message).toContain(`in use by another orq server (pid ${process.pid})`);
    await store.close();
    const again = await openLmdbStore({ dataDir: dir, shards: 2, durability: "relaxed" });
    expect(again.meta.boots).toBe(store.meta.boots + 1);
    await again.close();
  });
});
