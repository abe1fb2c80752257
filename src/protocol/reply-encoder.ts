// Hand-written MessagePack for the two hottest replies, dequeue
// ({id, ok, items: [delivery...]}) and ack ({id, ok, acked, stale}), written
// as whole frames (4-byte big-endian length, then the body) into one
// growable buffer that is reused; each frame is handed out as a copy, or
// left at the buffer's start for a caller that copies it at once. The
// generic encoder spent 4-6 µs per dequeue-1 reply walking object keys; this
// writes the fixed keys as precomputed bytes. The forms chosen are the ones
// @msgpack/msgpack picks (smallest int form, uint64/int64 past 32 bits,
// float64 for non-integers), so the bytes match the generic encoder's.
//
// A dequeue reply carries the engine's deliveries as they are (camelCase
// fields, DeliveryFields) and the encoder writes them under the wire's keys:
// no WireDelivery copy per delivery. So DeliveriesReply is not plain wire
// data; plainReply gives the map any other consumer (the generic encoder,
// the dashboard's op caller) must see. AckReply is plain data in wire order.

import { assert } from "../lib/assert.ts";
import { frameHeaderBytes } from "./frame-decoder.ts";
import type { WireDelivery } from "./wire-types.ts";

/**
 * A delivery as the engine hands it out (engine/api.ts's Delivery has these
 * fields; the protocol layer does not import the engine). The wire's
 * WireDelivery has the same values under snake_case keys.
 */
export interface DeliveryFields {
  id: string;
  topic: string;
  priority: number;
  payload: Uint8Array;
  metadata: Uint8Array;
  attempt: number;
  receipt: string;
  leaseExpiresAtMs: number;
  enqueuedAtMs: number;
  /** Absent for an item without a group. */
  group?: string;
  /** Absent for an item without a trace context. */
  trace?: string;
}

/** A delivery under the wire's keys, in wire order. */
export function deliveryToWire(d: DeliveryFields): WireDelivery {
  return {
    id: d.id,
    topic: d.topic,
    priority: d.priority,
    payload: d.payload,
    metadata: d.metadata,
    attempt: d.attempt,
    receipt: d.receipt,
    lease_expires_at_ms: d.leaseExpiresAtMs,
    enqueued_at_ms: d.enqueuedAtMs,
    ...(d.group === undefined ? {} : { group: d.group }),
    ...(d.trace === undefined ? {} : { trace: d.trace }),
  };
}

/** A dequeue reply ({id, ok, items} on the wire); the dispatcher sets `id`. */
export class DeliveriesReply {
  [field: string]: unknown;
  id: number;
  ok: true;
  deliveries: readonly DeliveryFields[];
  constructor(deliveries: readonly DeliveryFields[]) {
    this.id = 0;
    this.ok = true;
    this.deliveries = deliveries;
  }

  /** The reply as plain wire data, as the hand-written frame encodes it. */
  toWire(): { id: number; ok: true; items: WireDelivery[] } {
    return { id: this.id, ok: true, items: this.deliveries.map(deliveryToWire) };
  }
}

/** A reply as plain wire data: a DeliveriesReply's wire map, anything else as it is. */
export function plainReply(reply: Record<string, unknown>): Record<string, unknown> {
  return reply instanceof DeliveriesReply ? reply.toWire() : reply;
}

/** An ack reply; the dispatcher sets `id`. */
export class AckReply {
  [field: string]: unknown;
  id: number;
  ok: true;
  acked: number;
  stale: readonly string[];
  constructor(acked: number, stale: readonly string[]) {
    this.id = 0;
    this.ok = true;
    this.acked = acked;
    this.stale = stale;
  }
}

/** A key as MessagePack bytes (fixstr header and ASCII), preceded by `prefix` bytes. */
function keyBytes(prefix: readonly number[], key: string): Uint8Array {
  const out = new Uint8Array(prefix.length + 1 + key.length);
  out.set(prefix);
  out[prefix.length] = 0xa0 + key.length;
  for (let i = 0; i < key.length; i++) out[prefix.length + 1 + i] = key.charCodeAt(i);
  return out;
}

const trueByte = 0xc3;
// Top level: a map of 3 (dequeue) or 4 (ack) whose first key is "id".
const deliveriesHead = keyBytes([0x83], "id");
const ackHead = keyBytes([0x84], "id");
const okThenItems = keyBytes([...keyBytes([], "ok"), trueByte], "items");
const okThenAcked = keyBytes([...keyBytes([], "ok"), trueByte], "acked");
const staleKey = keyBytes([], "stale");
// One delivery: a map of 9.
const deliveryHead = keyBytes([0x89], "id");
/** A delivery of an item with a group or a trace: one more entry each, `group` then `trace`, last. */
const groupedDeliveryHead = keyBytes([0x8a], "id");
const twoMoreDeliveryHead = keyBytes([0x8b], "id");
const groupKey = keyBytes([], "group");
const traceKey = keyBytes([], "trace");
const topicKey = keyBytes([], "topic");
const priorityKey = keyBytes([], "priority");
const payloadKey = keyBytes([], "payload");
const metadataKey = keyBytes([], "metadata");
const attemptKey = keyBytes([], "attempt");
const receiptKey = keyBytes([], "receipt");
const leaseKey = keyBytes([], "lease_expires_at_ms");
const enqueuedKey = keyBytes([], "enqueued_at_ms");

/** Room for one delivery's keys and headers (about 190 bytes), beyond its strings and bins. */
const deliveryFixedBytes = 256;
const initialBufferBytes = 64 * 1024;

const textEncoder = new TextEncoder();

export class ReplyEncoder {
  private bytes = new Uint8Array(initialBufferBytes);
  private view = new DataView(this.bytes.buffer);
  private pos = 0;

  /** The frame of a dequeue reply: a copy the caller keeps. */
  deliveriesFrame(id: number, items: readonly DeliveryFields[]): Uint8Array {
    this.writeDeliveries(id, items);
    return this.finish().slice();
  }

  /**
   * The same frame, left in the encoder's buffer (frameBytes) and good until
   * its next call, for a caller that copies it at once: its length in bytes.
   * No view is made, so this allocates nothing.
   */
  writeDeliveriesFrame(id: number, items: readonly DeliveryFields[]): number {
    this.writeDeliveries(id, items);
    return this.finishInPlace();
  }

  /** The frame of an ack reply: a copy the caller keeps. */
  ackFrame(id: number, acked: number, stale: readonly string[]): Uint8Array {
    this.writeAck(id, acked, stale);
    return this.finish().slice();
  }

  /** The same frame, left in frameBytes as writeDeliveriesFrame leaves its own: its length in bytes. */
  writeAckFrame(id: number, acked: number, stale: readonly string[]): number {
    this.writeAck(id, acked, stale);
    return this.finishInPlace();
  }

  /** The buffer the write*Frame calls leave their frame at the start of (it may be replaced by a larger one on a later call). */
  get frameBytes(): Uint8Array {
    return this.bytes;
  }

  private writeDeliveries(id: number, items: readonly DeliveryFields[]): void {
    this.pos = frameHeaderBytes;
    this.ensure(64);
    this.raw(deliveriesHead);
    this.number(id);
    this.raw(okThenItems);
    this.arrayHeader(items.length);
    for (let i = 0; i < items.length; i++) this.delivery(items[i]!);
  }

  private writeAck(id: number, acked: number, stale: readonly string[]): void {
    this.pos = frameHeaderBytes;
    this.ensure(64);
    this.raw(ackHead);
    this.number(id);
    this.raw(okThenAcked);
    this.number(acked);
    this.raw(staleKey);
    this.arrayHeader(stale.length);
    for (let i = 0; i < stale.length; i++) {
      const receipt = stale[i]!;
      this.ensure(5 + 3 * receipt.length);
      this.string(receipt);
    }
  }

  private delivery(d: DeliveryFields): void {
    const payload = d.payload;
    const metadata = d.metadata;
    this.ensure(deliveryFixedBytes + 3 * (d.id.length + d.topic.length + d.receipt.length) + payload.length + metadata.length);
    const group = d.group;
    const trace = d.trace;
    const extra = (group === undefined ? 0 : 1) + (trace === undefined ? 0 : 1);
    this.raw(extra === 0 ? deliveryHead : extra === 1 ? groupedDeliveryHead : twoMoreDeliveryHead);
    this.string(d.id);
    this.raw(topicKey);
    this.string(d.topic);
    this.raw(priorityKey);
    this.number(d.priority);
    this.raw(payloadKey);
    this.bin(payload);
    this.raw(metadataKey);
    this.bin(metadata);
    this.raw(attemptKey);
    this.number(d.attempt);
    this.raw(receiptKey);
    this.string(d.receipt);
    this.raw(leaseKey);
    this.number(d.leaseExpiresAtMs);
    this.raw(enqueuedKey);
    this.number(d.enqueuedAtMs);
    if (group !== undefined) {
      this.ensure(16 + 3 * group.length);
      this.raw(groupKey);
      this.string(group);
    }
    if (trace !== undefined) {
      this.ensure(16 + 3 * trace.length);
      this.raw(traceKey);
      this.string(trace);
    }
  }

  /** Fill in the length; the frame as a view of the buffer, which the next call reuses. */
  private finish(): Uint8Array {
    return this.bytes.subarray(0, this.finishInPlace());
  }

  /** Fill in the length; the frame's length in bytes (it starts the buffer). */
  private finishInPlace(): number {
    this.view.setUint32(0, this.pos - frameHeaderBytes);
    return this.pos;
  }

  /** Make room for `more` bytes past pos. Every write below relies on an earlier ensure. */
  private ensure(more: number): void {
    const needed = this.pos + more;
    if (needed <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(needed, this.bytes.length * 2));
    grown.set(this.bytes.subarray(0, this.pos));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  private raw(chunk: Uint8Array): void {
    const bytes = this.bytes;
    let pos = this.pos;
    // Keys are a few bytes: a loop beats set() at this size.
    for (let i = 0; i < chunk.length; i++) bytes[pos++] = chunk[i]!;
    this.pos = pos;
  }

  private arrayHeader(size: number): void {
    this.ensure(5);
    const bytes = this.bytes;
    if (size < 16) {
      bytes[this.pos++] = 0x90 + size;
    } else if (size < 0x10000) {
      bytes[this.pos++] = 0xdc;
      this.view.setUint16(this.pos, size);
      this.pos += 2;
    } else {
      bytes[this.pos++] = 0xdd;
      this.view.setUint32(this.pos, size);
      this.pos += 4;
    }
  }

  /** The same form @msgpack/msgpack picks for a number (needs 9 bytes of room). */
  private number(value: number): void {
    const bytes = this.bytes;
    const view = this.view;
    let pos = this.pos;
    if (!Number.isSafeInteger(value)) {
      bytes[pos] = 0xcb;
      view.setFloat64(pos + 1, value);
      this.pos = pos + 9;
      return;
    }
    if (value >= 0) {
      if (value < 0x80) {
        bytes[pos++] = value;
      } else if (value < 0x100) {
        bytes[pos++] = 0xcc;
        bytes[pos++] = value;
      } else if (value < 0x10000) {
        bytes[pos++] = 0xcd;
        view.setUint16(pos, value);
        pos += 2;
      } else if (value < 0x100000000) {
        bytes[pos++] = 0xce;
        view.setUint32(pos, value);
        pos += 4;
      } else {
        bytes[pos++] = 0xcf;
        view.setUint32(pos, Math.floor(value / 0x100000000));
        view.setUint32(pos + 4, value >>> 0);
        pos += 8;
      }
    } else if (value >= -0x20) {
      bytes[pos++] = 0xe0 | (value + 0x20);
    } else if (value >= -0x80) {
      bytes[pos++] = 0xd0;
      view.setInt8(pos, value);
      pos += 1;
    } else if (value >= -0x8000) {
      bytes[pos++] = 0xd1;
      view.setInt16(pos, value);
      pos += 2;
    } else if (value >= -0x80000000) {
      bytes[pos++] = 0xd2;
      view.setInt32(pos, value);
      pos += 4;
    } else {
      // Two's complement over 64 bits: the high word is floor(value / 2^32), both words taken mod 2^32.
      bytes[pos++] = 0xd3;
      view.setUint32(pos, Math.floor(value / 0x100000000) >>> 0);
      view.setUint32(pos + 4, value >>> 0);
      pos += 8;
    }
    this.pos = pos;
  }

  private stringHeader(byteLength: number): void {
    const bytes = this.bytes;
    if (byteLength < 32) {
      bytes[this.pos++] = 0xa0 + byteLength;
    } else if (byteLength < 0x100) {
      bytes[this.pos++] = 0xd9;
      bytes[this.pos++] = byteLength;
    } else if (byteLength < 0x10000) {
      bytes[this.pos++] = 0xda;
      this.view.setUint16(this.pos, byteLength);
      this.pos += 2;
    } else {
      bytes[this.pos++] = 0xdb;
      this.view.setUint32(this.pos, byteLength);
      this.pos += 4;
    }
  }

  /**
   * A str (needs 5 + 3 * length bytes of room). ASCII is written byte by
   * byte with the header taken from the length; at the first non-ASCII code
   * unit it starts over with the UTF-8 length counted and encodeInto.
   */
  private string(value: string): void {
    const start = this.pos;
    const length = value.length;
    this.stringHeader(length);
    const bytes = this.bytes;
    let pos = this.pos;
    for (let i = 0; i < length; i++) {
      const code = value.charCodeAt(i);
      if (code >= 0x80) {
        this.pos = start;
        this.nonAsciiString(value);
        return;
      }
      bytes[pos++] = code;
    }
    this.pos = pos;
  }

  private nonAsciiString(value: string): void {
    const byteLength = utf8Length(value);
    this.stringHeader(byteLength);
    const written = textEncoder.encodeInto(value, this.bytes.subarray(this.pos, this.pos + byteLength)).written;
    if (written !== byteLength) assert(false, `reply string: counted ${byteLength} UTF-8 bytes, wrote ${written}`);
    this.pos += byteLength;
  }

  /** A bin (needs 5 + length bytes of room). */
  private bin(value: Uint8Array): void {
    const size = value.length;
    const bytes = this.bytes;
    if (size < 0x100) {
      bytes[this.pos++] = 0xc4;
      bytes[this.pos++] = size;
    } else if (size < 0x10000) {
      bytes[this.pos++] = 0xc5;
      this.view.setUint16(this.pos, size);
      this.pos += 2;
    } else {
      bytes[this.pos++] = 0xc6;
      this.view.setUint32(this.pos, size);
      this.pos += 4;
    }
    if (size <= 16) {
      for (let i = 0; i < size; i++) bytes[this.pos + i] = value[i]!;
    } else {
      bytes.set(value, this.pos);
    }
    this.pos += size;
  }
}

/** UTF-8 length as TextEncoder writes it (a lone surrogate becomes U+FFFD, 3 bytes). */
function utf8Length(value: string): number {
  let byteLength = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x80) byteLength += 1;
    else if (code < 0x800) byteLength += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < value.length && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      byteLength += 4;
      i++;
    } else byteLength += 3;
  }
  return byteLength;
}
