// The store's meta record at open: made when a data dir is created, checked on
// every later open so a data dir is never misread (another layout version, or
// items spread over a different number of shards), and given the next boot
// number, which the store commits before anyone can use it.

import { randomBytes } from "node:crypto";
import type { MetaRecord } from "./record.ts";

/**
 * Version of the data dir layout (which databases exist, key format). Record
 * shapes are versioned separately, per value (RECORD_VERSION).
 */
export const FORMAT_VERSION = 1;

export function newMetaRecord(shards: number): MetaRecord {
  return {
    formatVersion: FORMAT_VERSION,
    shards,
    nodeId: randomBytes(8).toString("hex"),
    keysReservedBelow: 0,
    boots: 0,
  };
}

/**
 * The meta record of this open: one more boot. A store commits it durably
 * before it is handed out, so no two opens of a data dir share a boot number
 * (receipts include it: engine/state/ids.ts).
 */
export function nextBoot(meta: MetaRecord): MetaRecord {
  return { ...meta, boots: meta.boots + 1 };
}

/** Why a data dir's meta cannot be used with these options, or null when it can. */
export function metaMismatch(meta: MetaRecord, shards: number): string | null {
  if (meta.formatVersion !== FORMAT_VERSION) {
    return `data dir has layout version ${meta.formatVersion}; this build reads version ${FORMAT_VERSION}`;
  }
  if (meta.shards !== shards) {
    return `data dir was created with --shards ${meta.shards} but --shards ${shards} was given (items are placed by shard; use --shards ${meta.shards})`;
  }
  return null;
}
