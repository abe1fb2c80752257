// The grammar of item ids and receipts, and its one parser. An id is
// `<shard>:<key>`; a receipt is `<shard>:<key>:<deliveries>:<boot>`. Each
// number is canonical decimal: ASCII digits only, no sign, no leading zero
// but in "0" itself, below 2^53; deliveries and boot count from 1. So one item
// has exactly one id string, and lookups can use the string itself.
//
// Every layer that reads an id or a receipt parses it here: the engine, the
// cluster's routing, the PostgreSQL store and the client. It sits in lib
// because the engine and the store may not import protocol. Parsing never
// throws and allocates at most the result it returns; each caller decides
// what a malformed text means to it (a missing item, a stale receipt, no
// shard to route by, a broken invariant).

/** Digits in the longest number accepted: 2^53 - 1 has 16. */
const decimalDigitsMax = 16;

/** The canonical decimal in text[start, end), below 2^53, or -1. */
function parseDecimal(text: string, start: number, end: number): number {
  const length = end - start;
  if (length <= 0 || length > decimalDigitsMax) return -1;
  if (length > 1 && text.charCodeAt(start) === 48) return -1;
  let value = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    value = value * 10 + c;
  }
  return Number.isSafeInteger(value) ? value : -1;
}

/** An id's two numbers. */
export interface IdParts {
  shard: number;
  key: number;
}

/** The shard and key an id names, or null when the text is not an id. */
export function parseId(text: string): IdParts | null {
  const colon = text.indexOf(":");
  if (colon < 0) return null;
  const shard = parseDecimal(text, 0, colon);
  const key = parseDecimal(text, colon + 1, text.length);
  if (shard < 0 || key < 0) return null;
  return { shard, key };
}

/** A receipt's numbers, filled by readReceipt: callers keep one and reuse it (no allocation per receipt). */
export class ReceiptFields {
  shard = 0;
  key = 0;
  deliveries = 0;
  boot = 0;
}

/** Read a receipt's shard, key, delivery count and boot into `into`; false (fields unspecified) when the text is not a receipt. */
export function readReceipt(text: string, into: ReceiptFields): boolean {
  const bootColon = text.lastIndexOf(":");
  if (bootColon < 0) return false;
  const deliveriesColon = text.lastIndexOf(":", bootColon - 1);
  if (deliveriesColon < 0) return false;
  const keyColon = text.lastIndexOf(":", deliveriesColon - 1);
  // The id part must hold exactly one colon.
  if (keyColon < 0 || text.lastIndexOf(":", keyColon - 1) >= 0) return false;
  const shard = parseDecimal(text, 0, keyColon);
  const key = parseDecimal(text, keyColon + 1, deliveriesColon);
  const deliveries = parseDecimal(text, deliveriesColon + 1, bootColon);
  const boot = parseDecimal(text, bootColon + 1, text.length);
  if (shard < 0 || key < 0 || deliveries < 1 || boot < 1) return false;
  into.shard = shard;
  into.key = key;
  into.deliveries = deliveries;
  into.boot = boot;
  return true;
}

/**
 * The shard an id or a receipt names, or null when the text is neither (the
 * whole text is checked, not only its prefix). Allocates nothing: routing
 * calls it once per id or receipt of a request.
 */
export function shardOfIdOrReceipt(text: string): number | null {
  const keyColon = text.indexOf(":");
  if (keyColon < 0) return null;
  const shard = parseDecimal(text, 0, keyColon);
  if (shard < 0) return null;
  const deliveriesColon = text.indexOf(":", keyColon + 1);
  if (deliveriesColon < 0) return parseDecimal(text, keyColon + 1, text.length) < 0 ? null : shard;
  const bootColon = text.indexOf(":", deliveriesColon + 1);
  if (bootColon < 0 || text.indexOf(":", bootColon + 1) >= 0) return null;
  const key = parseDecimal(text, keyColon + 1, deliveriesColon);
  const deliveries = parseDecimal(text, deliveriesColon + 1, bootColon);
  const boot = parseDecimal(text, bootColon + 1, text.length);
  return key < 0 || deliveries < 1 || boot < 1 ? null : shard;
}
