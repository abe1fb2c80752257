// Records for storage tests: a plain pending item, one with every optional
// field set (so round trips cover each flag of the record format), a meta
// record, and values written by the previous record versions.

import type { ItemRecord, MetaRecord, OutcomeRecord } from "../../src/storage/record.ts";
import type { ItemKey, ShardBatch } from "../../src/storage/store.ts";

/**
 * A fresh pending item as enqueue stores it (no lease, TTL, requirements,
 * dependencies or key; deliverable when enqueued). The storage tests and the
 * storage benchmarks build their records from it; positional arguments keep
 * the benchmarks' per-record cost to the one object literal.
 */
export function pendingItemRecord(ns: string, topic: string, priority: number, payload: Uint8Array, enqueuedAtMs: number): ItemRecord {
  return {
    ns,
    topic,
    priority,
    payload,
    metadata: new Uint8Array(0),
    enqueuedAtMs,
    deliverAtMs: enqueuedAtMs,
    leaseMs: 30_000,
    ttlExpiresAtMs: null,
    delivery: "at_least_once",
    maxAttempts: 10,
    attempt: 0,
    deliveries: 0,
    leaseBoot: 0,
    state: "pending",
    leaseExpiresAtMs: null,
    deadReason: null,
    requires: null,
    after: null,
    key: null,
    group: null,
  };
}

export function itemRecord(overrides: Partial<ItemRecord> = {}): ItemRecord {
  return { ...pendingItemRecord("billing", "invoices", 5, new Uint8Array([1, 2, 3, 4]), 1_700_000_000_000), ...overrides };
}

export function fullItemRecord(): ItemRecord {
  return itemRecord({
    ns: "ns-é",
    topic: "topic/ünïcode/🚀",
    priority: -42,
    payload: new Uint8Array(300).map((_, index) => index & 0xff),
    metadata: new TextEncoder().encode('{"trace":"abc"}'),
    ttlExpiresAtMs: 1_700_000_360_000,
    delivery: "at_most_once",
    maxAttempts: 3,
    attempt: 2,
    deliveries: 7,
    leaseBoot: 4,
    state: "dead",
    leaseExpiresAtMs: 1_700_000_030_000,
    deadReason: "dependency 3:17 cancelled",
    requires: { gpu: { in: ["a100", "h100"] }, memory_gb: { gte: 40 }, region: "eu" },
    after: ["0:1", "3:17", "15:9007199254740991"],
    key: "order-123",
    group: "tenant-é",
  });
}

export function metaRecord(overrides: Partial<MetaRecord> = {}): MetaRecord {
  return { formatVersion: 1, shards: 16, nodeId: "a1b2c3d4e5f60718", keysReservedBelow: 20_000, boots: 3, ...overrides };
}

/**
 * Values written by the record version 1 codec (the build before leaseBoot
 * and boots), captured as hex: they must keep loading. `v1Full` is
 * fullItemRecord() without leaseBoot and group; `v1Leased` is itemRecord() leased
 * (attempt 1, deliveries 1, lease expiring at 1_700_000_030_000); `v1Meta` is
 * metaRecord() without boots.
 */
export const v1Values = {
  full:
    "01017f02c0450000000000004278bcfe568000004278bcfe5680000040dd4c00000000004278bcfeae6400004278bcfe5dd30000000000030000000200000007000000056e732dc3a900000014746f7069632fc3bc6ec3af636f64652ff09f9a800000012c000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b0000000f7b227472616365223a22616263227d00000019646570656e64656e637920333a31372063616e63656c6c65640000002e83a367707581a2696e92a461313030a468313030a96d656d6f72795f676281a367746528a6726567696f6ea265750000000300000003303a3100000004333a31370000001331353a39303037313939323534373430393931000000096f726465722d313233",
  leased:
    "0101020140140000000000004278bcfe568000004278bcfe5680000040dd4c00000000004278bcfe5dd300000000000a00000001000000010000000762696c6c696e6700000008696e766f69636573000000040102030400000000",
  meta: "0103000000010000001040d38800000000000000001061316232633364346535663630373138",
} as const;

/**
 * Values written by the record version 2 codec (the build before the fixed
 * item header of version 3), captured as hex: `v2Full` is fullItemRecord()
 * without group;
 * `v2Leased` is itemRecord() leased (attempt 1, deliveries 1, leaseBoot 2,
 * lease expiring at 1_700_000_030_000); `v2Meta` is metaRecord(); `v2Outcome`
 * is outcomeRecord().
 */
export const v2Values = {
  full:
    "02017f02c0450000000000004278bcfe568000004278bcfe5680000040dd4c00000000004278bcfeae6400004278bcfe5dd3000000000003000000020000000700000004000000056e732dc3a900000014746f7069632fc3bc6ec3af636f64652ff09f9a800000012c000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b0000000f7b227472616365223a22616263227d00000019646570656e64656e637920333a31372063616e63656c6c65640000002e83a367707581a2696e92a461313030a468313030a96d656d6f72795f676281a367746528a6726567696f6ea265750000000300000003303a3100000004333a31370000001331353a39303037313939323534373430393931000000096f726465722d313233",
  leased:
    "0201020140140000000000004278bcfe568000004278bcfe5680000040dd4c00000000004278bcfe5dd300000000000a0000000100000001000000020000000762696c6c696e6700000008696e766f69636573000000040102030400000000",
  meta: "0203000000010000001040d3880000000000000000030000001061316232633364346535663630373138",
  outcome: "0202004278bcfe6eea00000000000762696c6c696e67",
} as const;

/**
 * Values written by the record version 3 codec (the build before groups),
 * captured as hex: `full` is fullItemRecord() without group; `leased` is
 * itemRecord() leased as v2Values.leased is; `pause` is the pause of topic
 * "t" of namespace "n" until 1_700_000_000_123.
 */
export const v3Values = {
  full:
    "03017f02c0450000000000004278bcfe568000004278bcfe5680000040dd4c00000000004278bcfe5dd30000000000030000000200000007000000044278bcfeae640000000000056e732dc3a900000014746f7069632fc3bc6ec3af636f64652ff09f9a800000012c000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b0000000f7b227472616365223a22616263227d00000019646570656e64656e637920333a31372063616e63656c6c65640000002e83a367707581a2696e92a461313030a468313030a96d656d6f72795f676281a367746528a6726567696f6ea265750000000300000003303a3100000004333a31370000001331353a39303037313939323534373430393931000000096f726465722d313233",
  leased:
    "0301020140140000000000004278bcfe568000004278bcfe5680000040dd4c00000000004278bcfe5dd300000000000a0000000100000001000000020000000762696c6c696e6700000008696e766f69636573000000040102030400000000",
  pause: "0304014278bcfe5687b000000000016e0000000174",
} as const;

export function fromHex(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, "hex"));
}

export function outcomeRecord(overrides: Partial<OutcomeRecord> = {}): OutcomeRecord {
  return { ns: "billing", outcome: "acked", endedAtMs: 1_700_000_100_000, ...overrides };
}

/** A ShardBatch from its writes listed one object each, as tests read best (the batch itself keeps keys and records in parallel lists). */
export function shardBatch(shard: number, writes: ReadonlyArray<{ key: ItemKey; record: ItemRecord | Uint8Array | null }>): ShardBatch {
  return { shard, keys: writes.map((write) => write.key), records: writes.map((write) => write.record) };
}
