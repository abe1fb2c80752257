// Item ids and receipts as the engine writes and reads them. Their grammar
// and its one parser are lib/id-grammar.ts's: an id is `<shard>:<key>` and a
// receipt `<shard>:<key>:<deliveries>:<boot>`, all canonical decimal, so one
// item has exactly one id string and lookups can use the string itself. The
// boot (the store's MetaRecord.boots when the lease was granted) makes a
// receipt unique across restarts even when its lease never reached disk: the
// restarted server may reach the same delivery count again, never the same
// boot. To the engine a malformed id counts as missing and a malformed
// receipt (the older three-part form included) as stale; parsing never throws.

import { readReceipt, ReceiptFields } from "../../lib/id-grammar.ts";
import { receiptTailsCachedMax } from "../../limits.ts";
import type { ItemKey } from "../../storage/store.ts";

export { parseId, readReceipt, ReceiptFields } from "../../lib/id-grammar.ts";

// Ids and receipts are built on every delivery (LiveItem.id, toDelivery) and
// every enqueue. A template of several numbers is a string per number and a
// rope per three parts, each a JS-heap cell. An id is written into a scratch
// buffer and read as one flat string; a receipt is its id and a kept
// `:<deliveries>:<boot>` tail, one rope
// (docs/decisions/013-lent-replies-and-scratch.md). The text is the same. The
// kept tails belong to one engine (ReceiptFormat), so two engines in one
// process share nothing that changes.

/**
 * Where formatId writes an id's characters: two safe integers (16 digits at
 * most each) and a colon fit in 40 bytes.
 */
const idScratch = Buffer.alloc(40);

/**
 * `<shard>:<key>` as one flat string: written backwards into idScratch and
 * read as latin1, which is one JS-heap cell, where a template literal would
 * be two (the key's digits and the rope joining them, flattened later when
 * the id is hashed); every enqueued item's id is built here.
 */
export function formatId(shard: number, key: ItemKey): string {
  const end = idScratch.length;
  let at = writeDecimal(key, end);
  idScratch[--at] = 58;
  at = writeDecimal(shard, at);
  return idScratch.toString("latin1", at, end);
}

/** The decimal digits of a non-negative safe integer, ending just before idScratch[end]; returns where they start. */
function writeDecimal(value: number, end: number): number {
  let at = end;
  let rest = value;
  do {
    const digit = rest % 10;
    idScratch[--at] = 48 + digit;
    // Exact: (rest - digit) is a multiple of 10 (Math.floor(rest / 10) can round up near 2^53).
    rest = (rest - digit) / 10;
  } while (rest > 0);
  return at;
}

/** A receipt built whole: the text ReceiptFormat.format gives, for callers without an engine's kept tails. */
export function formatReceipt(id: string, deliveries: number, boot: number): string {
  return `${id}:${deliveries}:${boot}`;
}

/** An engine's receipts: the `:<deliveries>:<boot>` tails of its own boot, built once and kept. */
export class ReceiptFormat {
  /** Tail by delivery count, below receiptTailsCachedMax. */
  private readonly tails: string[] = [];

  constructor(readonly boot: number) {}

  format(id: string, deliveries: number, boot: number): string {
    if (deliveries >= receiptTailsCachedMax || boot !== this.boot) return formatReceipt(id, deliveries, boot);
    const tail = this.tails[deliveries] ?? (this.tails[deliveries] = `:${deliveries}:${boot}`);
    return id + tail;
  }
}

export interface ParsedReceipt {
  id: string;
  /** The item's delivery count when the receipt was issued (from 1). */
  deliveries: number;
  /** The boot the lease was granted in (from 1). */
  boot: number;
}

/** Split a receipt into the item id, delivery count and boot it names, or null when malformed. */
export function parseReceipt(receipt: string): ParsedReceipt | null {
  const fields = new ReceiptFields();
  if (!readReceipt(receipt, fields)) return null;
  return { id: formatId(fields.shard, fields.key), deliveries: fields.deliveries, boot: fields.boot };
}
