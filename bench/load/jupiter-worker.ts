// One Jupiter worker's acquisition, as lean as the load generator can make
// it: the dequeue goes out as a template with its id patched, its reply is
// read where it lies (reply-peek.ts: `ok`, then the first item's receipt),
// and the receipt's bytes, exactly as the reply carries them, go on into the
// ack's frame behind a template of everything before them. The ack's reply
// is read the same way (`acked` must be 1). One promise per acquisition, no
// reply decoded whole unless it is an error.
//
// Why: the generator shares two cores with the server it measures. Decoding
// each dequeue reply whole (@msgpack/msgpack's Decoder: 2.0-2.3 µs for a
// 286-byte reply) and encoding each ack as an object, with a promise for
// each of the two, costs the generator 6.5-6.8 µs per acquisition against
// the Jupiter floor; read this way, 1.6-2.6.
// The ping ceiling beside it is read the same way (`ok` only), so both
// sides of the ratio pay the same per-reply reading.

import { bodyError, makeTemplate, type OrqConn, type RequestTemplate } from "./orq-conn.ts";
import { firstElement, isString, isTrue, mapValue, readUint, skipValue } from "./reply-peek.ts";

/** The last two bytes of a template made with `receipts: [""]`: an array of one, then the empty fixstr. */
const ONE_EMPTY_STRING = [0x91, 0xa0];

/**
 * The ack of one receipt up to the receipt itself: `{id, op: "ack", ns,
 * receipts: [` with the receipt's MessagePack string to follow
 * (OrqConn.sendTemplateWithTail).
 */
export function ackHead(ns: string): RequestTemplate {
  const whole = makeTemplate({ op: "ack", ns, receipts: [""] }).body;
  const last = whole.length - 2;
  if (whole[last] !== ONE_EMPTY_STRING[0] || whole[last + 1] !== ONE_EMPTY_STRING[1]) throw new Error("jupiter worker: the ack template does not end with its receipts array");
  return { body: whole.subarray(0, last + 1) };
}

/** Offset of the dequeue reply's first receipt (a MessagePack string), -1 when it delivered nothing; throws when the reply is not ok. */
export function firstReceiptAt(bytes: Uint8Array, start: number, end: number): number {
  if (!isTrue(bytes, mapValue(bytes, start, "ok"))) throw bodyError(bytes, start, end);
  const itemsAt = mapValue(bytes, start, "items");
  if (itemsAt < 0 || itemsAt >= end) throw new Error("jupiter worker: a dequeue reply without items");
  const itemAt = firstElement(bytes, itemsAt);
  if (itemAt < 0) return -1;
  const receiptAt = mapValue(bytes, itemAt, "receipt");
  if (receiptAt < 0 || !isString(bytes, receiptAt) || skipValue(bytes, receiptAt) > end) throw new Error("jupiter worker: a delivery without a receipt");
  return receiptAt;
}

/**
 * Dequeues with `dequeue` (count 1) and acks what it delivered. Resolves true
 * once the ack answered `acked: 1`, false when the dequeue delivered nothing;
 * rejects on any error reply.
 */
export function acquireOne(conn: OrqConn, dequeue: RequestTemplate, ack: RequestTemplate): Promise<boolean> {
  return new Promise((resolve, reject) => {
    conn.sendTemplateForBody(dequeue, (bytes, start, end) => {
      let receiptAt: number;
      try {
        receiptAt = firstReceiptAt(bytes, start, end);
      } catch (error) {
        reject(error);
        return;
      }
      if (receiptAt < 0) {
        resolve(false);
        return;
      }
      conn.sendTemplateWithTail(ack, bytes, receiptAt, skipValue(bytes, receiptAt), (ackBytes, ackStart, ackEnd) => {
        const ackedAt = mapValue(ackBytes, ackStart, "acked");
        if (isTrue(ackBytes, mapValue(ackBytes, ackStart, "ok")) && ackedAt >= 0 && readUint(ackBytes, ackedAt) === 1) resolve(true);
        else reject(ackedAt >= 0 ? new Error(`jupiter worker: ack answered acked ${readUint(ackBytes, ackedAt)}`) : bodyError(ackBytes, ackStart, ackEnd));
      });
    });
  });
}

/** Sends `ping` and resolves once its reply says `ok: true`. */
export function pingOnce(conn: OrqConn, ping: RequestTemplate): Promise<void> {
  return new Promise((resolve, reject) => {
    conn.sendTemplateForBody(ping, (bytes, start, end) => {
      if (isTrue(bytes, mapValue(bytes, start, "ok"))) resolve();
      else reject(bodyError(bytes, start, end));
    });
  });
}
