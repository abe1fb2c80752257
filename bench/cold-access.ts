// What one memory access costs on this machine when it comes after a pause,
// in one process with no socket: an LMDB read of the next record (lmdb-js
// getBinaryFast, 16 shard sub-databases of 20,000 records of 200 bytes,
// opened with orq's own options) and a Map lookup of a random key among
// 320,000 small objects, each timed alone
//   - back to back (after a microtask),
//   - after a 1 ms sleep,
//   - after a strict (fsync'd) write commit,
//   - after such a commit and a 1 ms sleep (the strict latency scenario's shape:
//     its dequeue comes after the previous item's ack was made durable).
// Why: bench/dequeue-cold.ts shows orq's dequeue costing much more after a
// pause than its ping does; this says how much of that one cold access can
// explain. Pin it to one CPU as the latency scenario pins the server:
//   taskset -c 0 ./node_modules/.bin/bun bench/cold-access.ts [rounds]
// Prints p50s per row and round; read rows against each other within a run.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { environmentOptions, shardDbOptions } from "../src/storage/lmdb/lmdb-options.ts";
import { p50 } from "./support/p50.ts";

const rounds = Number(process.argv[2] ?? 2);
const shards = 16;
const recordsPerShard = 20_000;
const recordBytes = 200;
const objects = 320_000;
const samplesPerRow = 3000;

const dir = mkdtempSync(join(tmpdir(), "orq-cold-access-"));
const env = open(environmentOptions(join(dir, "data.mdb"), shards, "strict"));
const dbs = Array.from({ length: shards }, (_, shard) => env.openDB<Uint8Array, number>(shardDbOptions(shard)));
const value = new Uint8Array(recordBytes).fill(7);
await env.transaction(() => {
  for (const db of dbs) for (let key = 1; key <= recordsPerShard; key++) db.putSync(key, value);
});
const byKey = new Map<number, { id: number; twice: number; tag: string }>();
// Keys scattered over a range so neighbouring lookups share no bucket.
for (let i = 0; i < objects; i++) byKey.set((i * 7919) % 1_000_003, { id: i, twice: i * 2, tag: "x" });
const keys = [...byKey.keys()];

let next = 1;
let sink = 0;
const commitOne = () => env.transaction(() => void dbs[0]?.putSync(recordsPerShard + 1 + (next % 1000), value));
const rows: Array<[string, () => Promise<unknown>]> = [
  ["back to back (after a microtask)", () => Promise.resolve()],
  ["after a 1 ms sleep", () => Bun.sleep(1)],
  ["after a strict commit", commitOne],
  ["after a strict commit and 1 ms", async () => (await commitOne(), await Bun.sleep(1))],
];
try {
  for (let round = 0; round < rounds; round++) {
    for (const [label, before] of rows) {
      const lmdbUs: number[] = [];
      const mapUs: number[] = [];
      for (let i = 0; i < samplesPerRow; i++) {
        await before();
        const db = dbs[next % shards];
        const key = 1 + ((next >> 4) % recordsPerShard);
        next++;
        let t0 = Bun.nanoseconds();
        sink += db?.getBinaryFast(key)?.length ?? 0;
        lmdbUs.push((Bun.nanoseconds() - t0) / 1000);
        t0 = Bun.nanoseconds();
        sink += byKey.get(keys[(next * 104_729) % keys.length] ?? 0)?.id ?? 0;
        mapUs.push((Bun.nanoseconds() - t0) / 1000);
      }
      console.log(`round ${round + 1}  ${label.padEnd(34)} LMDB get p50 ${p50(lmdbUs).toFixed(2)} µs   Map get p50 ${p50(mapUs).toFixed(2)} µs`);
    }
  }
  if (sink === 0) console.log("(nothing read)");
} finally {
  env.close();
  rmSync(dir, { recursive: true, force: true });
}
