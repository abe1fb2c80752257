// One acquisition of the locality scenario (locality.ts), read as lean as the
// Jupiter worker's (jupiter-worker.ts): the dequeue goes out as a template,
// its reply is read where it lies (reply-peek.ts), and the receipt's bytes go
// on into the ack's frame. Beside the receipt it reads two fields of the
// delivery: the first byte of its payload, which names the repository the
// item prefers (a delivery does not say how well the worker fitted, so the
// scenario compares that byte with the worker's own repository), and its
// `attempt`, so a delivery of an item a second time is seen.

import { bodyError, type OrqConn, type RequestTemplate } from "./orq-conn.ts";
import { firstElement, isString, isTrue, mapValue, readUint, skipValue } from "./reply-peek.ts";

/** What one acquisition delivered: the repository byte of its payload and its attempt number. */
export interface Tagged {
  repo: number;
  attempt: number;
}

/** Offset of the dequeue reply's first delivery (a map), -1 when it delivered nothing; throws when the reply is not ok. */
function firstDeliveryAt(bytes: Uint8Array, start: number, end: number): number {
  if (!isTrue(bytes, mapValue(bytes, start, "ok"))) throw bodyError(bytes, start, end);
  const itemsAt = mapValue(bytes, start, "items");
  if (itemsAt < 0 || itemsAt >= end) throw new Error("locality worker: a dequeue reply without items");
  return firstElement(bytes, itemsAt);
}

/** The first byte of the bin under `payload` in the delivery at `itemAt`; throws when there is none. */
export function payloadFirstByte(bytes: Uint8Array, itemAt: number, end: number): number {
  const at = mapValue(bytes, itemAt, "payload");
  const marker = at < 0 ? -1 : (bytes[at] as number);
  // bin 8, 16, 32: the data starts after the marker and a length of 1, 2 or 4 bytes.
  const header = marker === 0xc4 ? 2 : marker === 0xc5 ? 3 : marker === 0xc6 ? 5 : -1;
  if (header < 0 || skipValue(bytes, at) > end || skipValue(bytes, at) === at + header) throw new Error("locality worker: a delivery without a payload byte");
  return bytes[at + header] as number;
}

/**
 * Dequeues with `dequeue` (count 1) and acks what it delivered. Resolves with
 * the delivery's repository byte and attempt once the ack answered `acked:
 * 1`, null when the dequeue delivered nothing; rejects on any error reply.
 */
export function acquireTagged(conn: OrqConn, dequeue: RequestTemplate, ack: RequestTemplate): Promise<Tagged | null> {
  return new Promise((resolve, reject) => {
    conn.sendTemplateForBody(dequeue, (bytes, start, end) => {
      let tagged: Tagged;
      let receiptAt: number;
      try {
        const itemAt = firstDeliveryAt(bytes, start, end);
        if (itemAt < 0) {
          resolve(null);
          return;
        }
        receiptAt = mapValue(bytes, itemAt, "receipt");
        if (receiptAt < 0 || !isString(bytes, receiptAt) || skipValue(bytes, receiptAt) > end) throw new Error("locality worker: a delivery without a receipt");
        tagged = { repo: payloadFirstByte(bytes, itemAt, end), attempt: readUint(bytes, mapValue(bytes, itemAt, "attempt")) };
      } catch (error) {
        reject(error);
        return;
      }
      conn.sendTemplateWithTail(ack, bytes, receiptAt, skipValue(bytes, receiptAt), (ackBytes, ackStart, ackEnd) => {
        const ackedAt = mapValue(ackBytes, ackStart, "acked");
        if (isTrue(ackBytes, mapValue(ackBytes, ackStart, "ok")) && ackedAt >= 0 && readUint(ackBytes, ackedAt) === 1) resolve(tagged);
        else reject(ackedAt >= 0 ? new Error(`locality worker: ack answered acked ${readUint(ackBytes, ackedAt)}`) : bodyError(ackBytes, ackStart, ackEnd));
      });
    });
  });
}
