// Every option orq passes to lmdb-js, in one place, each with its reason. The
// LMDB store (lmdb-store.ts) imports these and sets nothing else, so a reader
// of this file knows exactly how the environment is configured.

import type { Durability } from "../store.ts";

/** Sub-databases besides the shards: `meta`, `outcomes` and `acked`. */
export const namedDbCount = 3;

/** Name of shard n's sub-database: fixed width so names sort in shard order. */
export function shardDbName(shard: number): string {
  return `shard-${String(shard).padStart(3, "0")}`;
}

export const metaDbName = "meta";
export const outcomesDbName = "outcomes";
export const ackedDbName = "acked";
/** The meta record's key in the `meta` sub-database. */
export const metaKey = "meta";
/**
 * Pauses (of topics and groups) live in the `meta` sub-database too, one
 * value per pause under this prefix + store.ts's pauseKey. Not a
 * sub-database of their own: an older build refuses a data dir holding a
 * database it does not know, and reads only the `meta` key here, so a
 * downgrade still opens (forgetting pauses).
 */
export const pauseKeyPrefix = "pause:";
/** First key after every pause key (":" + 1 is ";"). */
export const pauseKeyEnd = "pause;";
/** Policies live beside the pauses, for the same reason: this prefix + store.ts's policyKey. */
export const policyKeyPrefix = "policy:";
/** First key after every policy key. */
export const policyKeyEnd = "policy;";
/** Schedules too: this prefix + store.ts's scheduleKey. */
export const scheduleKeyPrefix = "schedule:";
/** First key after every schedule key. */
export const scheduleKeyEnd = "schedule;";

/** The environment's file inside the data dir (LMDB adds `data.mdb-lock` beside it). */
export const dataFileName = "data.mdb";

/**
 * Virtual address space reserved for the map (1 TiB). Without a write map LMDB
 * writes with pwrite and the file grows only as pages are used, so a large
 * reservation costs nothing but address space, and MDB_MAP_FULL never becomes
 * the limit before the disk does.
 */
const mapSizeBytes = 2 ** 40;

export function environmentOptions(path: string, shards: number, durability: Durability) {
  return {
    path,
    // `path` names the file, not a directory: orq owns the data dir and
    // checks it itself (existence, type, permissions) for clear open errors.
    noSubdir: true,
    // One sub-database per shard plus meta, outcomes and acked; LMDB's default (12) is too few.
    maxDbs: shards + namedDbCount,
    mapSize: mapSizeBytes,
    // A fixed, large map: remapping chunks makes reads slower and is only
    // needed on 32-bit systems.
    remapChunks: false,
    // 4 KiB pages match the OS page and suit a data set that mostly fits in memory.
    pageSize: 4096,
    // No write map: pages are written with pwrite, so a full disk surfaces as an
    // ENOSPC commit error instead of a SIGBUS on a mapped page, and a stray
    // pointer cannot scribble on the database.
    useWritemap: false,
    // Skip zeroing malloc'ed pages before writing: faster, and the data file is
    // the server's alone (only matters for unused bytes of a page).
    noMemInit: true,
    // strict: sync inside the commit, so a resolved commit is on disk. With
    // overlappingSync the promise could resolve before the flush finished.
    overlappingSync: false,
    // relaxed: never fsync. A commit survives a crash of the process (pages are
    // in the OS page cache) but not a power loss or kernel crash, which may also
    // leave the file needing the last synced state.
    noSync: durability === "relaxed",
    // noMetaSync buys little once the data is synced (strict) or nothing (relaxed).
    noMetaSync: false,
    // The GroupCommitter already gathers a turn's writes into one batch, and
    // each commit is one explicit transaction(), atomic by itself. With
    // event-turn batching on, lmdb-js left an internal rejected promise
    // unhandled after every failed commit (seen with a full disk).
    eventTurnBatching: false,
    // Start the transaction at once: batching already happened upstream.
    commitDelay: 0,
    // Resolve commit promises when flushed (strict) rather than when merely visible.
    separateFlushed: false,
    // Values are our own binary records (record-codec.ts): lmdb-js's default
    // msgpackr encoding writes record definitions into every value, measured 2x
    // slower reads.
    encoding: "binary" as const,
    // Records are decoded into fresh objects by the engine; an object cache
    // would only hold a second copy.
    cache: false,
    compression: false,
    useVersions: false,
  };
}

/**
 * Shard keys: the item key as 8 bytes big-endian, so byte order is numeric
 * order and reads decode a key without allocating (composite or array keys
 * were measured to scan 3x slower).
 */
export const shardKeyEncoder = {
  writeKey(key: number, target: Uint8Array, start: number): number {
    const high = Math.floor(key / 0x1_0000_0000);
    const low = key >>> 0;
    target[start] = high >>> 24;
    target[start + 1] = (high >>> 16) & 0xff;
    target[start + 2] = (high >>> 8) & 0xff;
    target[start + 3] = high & 0xff;
    target[start + 4] = low >>> 24;
    target[start + 5] = (low >>> 16) & 0xff;
    target[start + 6] = (low >>> 8) & 0xff;
    target[start + 7] = low & 0xff;
    return start + 8;
  },
  readKey(source: Uint8Array, start: number, end: number): number {
    if (end - start !== 8) throw new Error(`shard key of ${end - start} bytes, expected 8`);
    const high = ((source[start] as number) * 0x100_0000 + ((source[start + 1] as number) << 16)) + ((source[start + 2] as number) << 8) + (source[start + 3] as number);
    const low = ((source[start + 4] as number) * 0x100_0000 + ((source[start + 5] as number) << 16)) + ((source[start + 6] as number) << 8) + (source[start + 7] as number);
    return high * 0x1_0000_0000 + low;
  },
};

/** Per-shard sub-database options: binary values, the 8-byte key encoder. */
export function shardDbOptions(shard: number) {
  return { name: shardDbName(shard), encoding: "binary" as const, keyEncoder: shardKeyEncoder, cache: false };
}

/**
 * A second, read-only handle on a shard's sub-database for recovery: lmdb-js
 * hands each value to `decode` straight from its shared read buffer (with
 * `binary` alone it first copies every value into a new Buffer, measured
 * about a fifth of a 1,000,000-item recovery). `decode` must copy what it
 * keeps (ours skips payload and metadata, and copies nothing else out of the
 * buffer). Never written through: `encode` refuses.
 */
export function shardRecoveryDbOptions(shard: number, decode: (bytes: Uint8Array, length: number) => unknown) {
  return {
    ...shardDbOptions(shard),
    encoder: {
      encode(): never {
        throw new Error(`shard ${shard}: the recovery handle is read-only`);
      },
      decode,
      // lmdb-js: the decoder copies what it keeps, so the shared buffer may be handed over as is.
      needsStableBuffer: false,
    },
  };
}

/** Outcomes are keyed by item id string ("3:17"): ordered-binary stores a string as its UTF-8 bytes. */
export function outcomesDbOptions() {
  return { name: outcomesDbName, encoding: "binary" as const, keyEncoding: "ordered-binary" as const, cache: false };
}

/**
 * The acked log (acked-log.ts): one record per commit that acked something,
 * keyed by a sequence number (ordered-binary sorts numbers numerically), so
 * key order is commit order and a purge deletes from the front.
 */
export function ackedDbOptions() {
  return { name: ackedDbName, encoding: "binary" as const, keyEncoding: "ordered-binary" as const, cache: false };
}

export function metaDbOptions() {
  return { name: metaDbName, encoding: "binary" as const, keyEncoding: "ordered-binary" as const, cache: false };
}
