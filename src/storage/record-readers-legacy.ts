// Readers for record versions older than RECORD_VERSION, kept so data dirs
// written by earlier builds still load; each converts to the current shape.
// Nothing writes these versions any more: a changed record is written back
// in the current layout (item-record.ts).
//
// Item version 3 shares the current header and is read with it (item-record.ts).
// Item version 2: leaseExpiresAtMs only when its flag is set, after
// [ttlExpiresAtMs] (so a lease changed the value's length). Item version 1:
// version 2 without u32 leaseBoot (read as 0). Meta version 1: version 2
// without u32 boots (read as 0; the next open makes it 1). From ns on, items
// are the same in every version (record-codec.ts reads that tail); outcomes
// are the same in every version.

import type { ByteReader } from "./byte-cursor.ts";
import type { MetaRecord } from "./record.ts";
import { RecordDecodeError, itemFlag, stateCodes } from "./record-format.ts";
import type { ItemHead } from "./record-format.ts";

/** Read a version 1 item's fixed head (after version and kind) into `head`; returns its flags. */
export function readItemHeadV1(reader: ByteReader, head: ItemHead): number {
  return readItemHead(reader, false, head);
}

/** Read a version 2 item's fixed head (after version and kind) into `head`; returns its flags. */
export function readItemHeadV2(reader: ByteReader, head: ItemHead): number {
  return readItemHead(reader, true, head);
}

/** Versions 1 and 2 differ only by leaseBoot after deliveries (a v1 value reads leaseBoot 0). */
function readItemHead(reader: ByteReader, hasLeaseBoot: boolean, head: ItemHead): number {
  const flags = reader.u8();
  const state = stateCodes[reader.u8()];
  if (state === undefined) throw new RecordDecodeError("item record: unknown state code");
  const priority = reader.f64();
  const enqueuedAtMs = reader.f64();
  const deliverAtMs = reader.f64();
  const leaseMs = reader.f64();
  const ttlExpiresAtMs = flags & itemFlag.ttl ? reader.f64() : null;
  const leaseExpiresAtMs = flags & itemFlag.leaseExpires ? reader.f64() : null;
  const maxAttempts = reader.u32();
  const attempt = reader.u32();
  const deliveries = reader.u32();
  const leaseBoot = hasLeaseBoot ? reader.u32() : 0;
  head.priority = priority;
  head.enqueuedAtMs = enqueuedAtMs;
  head.deliverAtMs = deliverAtMs;
  head.leaseMs = leaseMs;
  head.ttlExpiresAtMs = ttlExpiresAtMs;
  head.maxAttempts = maxAttempts;
  head.attempt = attempt;
  head.deliveries = deliveries;
  head.leaseBoot = leaseBoot;
  head.state = state;
  head.leaseExpiresAtMs = leaseExpiresAtMs;
  return flags;
}

/** Meta version 1: version 2 without boots (read as 0). */
export function readMetaV1(reader: ByteReader): MetaRecord {
  const formatVersion = reader.u32();
  const shards = reader.u32();
  const keysReservedBelow = reader.f64();
  const nodeId = reader.string();
  return { formatVersion, shards, nodeId, keysReservedBelow, boots: 0 };
}
